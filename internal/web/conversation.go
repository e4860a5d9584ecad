package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/llm"
)

// Exchange statuses.
const (
	StatusComplete   = "complete"   // the answer arrived whole
	StatusIncomplete = "incomplete" // the model stream was cut off; the part that arrived is kept
	StatusStopped    = "stopped"    // the client closed the stream before the end
	StatusError      = "error"      // the answer failed
)

// Conversation limits.
const (
	maxTitleRunes       = 100
	autoTitleRunes      = 40
	defaultTitle        = "新しい会話"
	maxConversations    = 500 // per user; the oldest are dropped beyond it
	maxExchangesPerConv = 500
)

// Version is one answer to an exchange's question (regenerating or
// editing adds one).
type Version struct {
	Question       string       `json:"question"`
	Answer         string       `json:"answer"`
	HTML           string       `json:"html"`
	Citations      []Citation   `json:"citations"`
	Status         string       `json:"status"`
	RewrittenQuery string       `json:"rewritten_query,omitempty"`
	RequestID      string       `json:"request_id"`
	CreatedAt      time.Time    `json:"created_at"`
	Flags          answer.Flags `json:"flags"`
}

// Feedback is a person's rating of an exchange's current answer.
type Feedback struct {
	Rating  string    `json:"rating"`
	Comment string    `json:"comment,omitempty"`
	At      time.Time `json:"at"`
	Version int       `json:"version"`
}

// Exchange is one question of a conversation with its versions. In JSON
// the current version's fields stand at the top level too.
type Exchange struct {
	ID       string    `json:"id"`
	Current  int       `json:"version"`
	Versions []Version `json:"versions"`
	Feedback *Feedback `json:"feedback,omitempty"`
}

// MarshalJSON writes the exchange with its current version's fields.
func (e Exchange) MarshalJSON() ([]byte, error) {
	type plain Exchange
	var cur Version
	if e.Current >= 0 && e.Current < len(e.Versions) {
		cur = e.Versions[e.Current]
	}
	return json.Marshal(struct {
		Version
		plain
	}{cur, plain(e)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Exchange) UnmarshalJSON(b []byte) error {
	type plain Exchange
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Exchange(p)
	return nil
}

// Conversation is one chat of one user.
type Conversation struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	AutoTitle bool       `json:"auto_title,omitempty"` // the title is the first question (until renamed)
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	Exchanges []Exchange `json:"exchanges"`
}

// ConversationSummary is a conversation in the list.
type ConversationSummary struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Exchanges int       `json:"exchanges"`
}

func (c *Conversation) summary() ConversationSummary {
	return ConversationSummary{ID: c.ID, Title: c.Title, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Exchanges: len(c.Exchanges)}
}

// exchange returns the exchange with id and its position.
func (c *Conversation) exchange(id string) (*Exchange, int) {
	for i := range c.Exchanges {
		if c.Exchanges[i].ID == id {
			return &c.Exchanges[i], i
		}
	}
	return nil, -1
}

// history is the model's view of the conversation before exchange i: the
// last max exchanges' current questions and answers (answers that failed
// are left out).
func (c *Conversation) history(before, max int) []llm.Message {
	var msgs []llm.Message
	start := 0
	if before > max {
		start = before - max
	}
	for _, e := range c.Exchanges[start:before] {
		v := e.Versions[e.Current]
		if v.Status == StatusError || strings.TrimSpace(v.Answer) == "" {
			continue
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: v.Question}, llm.Message{Role: llm.RoleAssistant, Content: v.Answer})
	}
	return msgs
}

// convStore keeps conversations as one JSON file each under
// dir/<user>/<id>.json, where <user> is a hash of the user's session id
// (the cookie value itself is never written). Files are replaced
// atomically; one mutex orders all writes.
type convStore struct {
	dir string
	now func() time.Time
	mu  sync.Mutex
}

// Errors of the conversation store.
var (
	errConvNotFound = &requestError{status: http.StatusNotFound, code: "conversation_not_found",
		msg: "会話が見つかりません — 削除されたか、別のブラウザーで作られた会話です。一覧から選び直してください"}
	errExchangeNotFound = &requestError{status: http.StatusNotFound, code: "exchange_not_found",
		msg: "やり取りが見つかりません — 会話を開き直してください"}
)

var validConvID = regexp.MustCompile(`^[cx]_[0-9a-f]{16,32}$`)

// newID returns prefix_ and 64 random bits in hex.
func newID(prefix string) string { return prefix + "_" + newSessionID()[:16] }

func (st *convStore) userDir(user string) string {
	h := sha256.Sum256([]byte(user))
	return filepath.Join(st.dir, hex.EncodeToString(h[:16]))
}

func (st *convStore) file(user, id string) string {
	return filepath.Join(st.userDir(user), id+".json")
}

// load reads one conversation. Callers hold st.mu.
func (st *convStore) load(user, id string) (*Conversation, error) {
	if !validConvID.MatchString(id) || !strings.HasPrefix(id, "c_") {
		return nil, errConvNotFound
	}
	b, err := os.ReadFile(st.file(user, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errConvNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read conversation %s: %w", id, err)
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("read conversation %s: %w", id, err)
	}
	return &c, nil
}

// save writes a conversation atomically. Callers hold st.mu.
func (st *convStore) save(user string, c *Conversation) error {
	dir := st.userDir(user)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the conversation folder: %w", err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode conversation: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".conv-*")
	if err != nil {
		return fmt.Errorf("save conversation: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("save conversation: %w — is the disk full?", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save conversation: %w", err)
	}
	if err := os.Rename(tmp.Name(), st.file(user, c.ID)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save conversation: %w", err)
	}
	return nil
}

// all reads every conversation of user. Callers hold st.mu.
func (st *convStore) all(user string) ([]*Conversation, error) {
	names, err := filepath.Glob(filepath.Join(st.userDir(user), "c_*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Conversation
	for _, n := range names {
		c, err := st.load(user, strings.TrimSuffix(filepath.Base(n), ".json"))
		if err != nil {
			continue // a damaged file hides one conversation, not the list
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// list returns user's conversations, newest first; q (when not empty)
// keeps those whose title, questions or answers contain it.
func (st *convStore) list(user, q string) ([]ConversationSummary, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	all, err := st.all(user)
	if err != nil {
		return nil, err
	}
	needle := foldText(q)
	out := []ConversationSummary{}
	for _, c := range all {
		if needle == "" || c.matches(needle) {
			out = append(out, c.summary())
		}
	}
	return out, nil
}

// foldText is text for searching: NFKC, lower case, spaces folded.
func foldText(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(norm.NFKC.String(s)), " "))
}

func (c *Conversation) matches(needle string) bool {
	if strings.Contains(foldText(c.Title), needle) {
		return true
	}
	for _, e := range c.Exchanges {
		for _, v := range e.Versions {
			if strings.Contains(foldText(v.Question), needle) || strings.Contains(foldText(v.Answer), needle) {
				return true
			}
		}
	}
	return false
}

// create starts a conversation; an empty title is replaced by the first
// question.
func (st *convStore) create(user, title string) (*Conversation, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	c := &Conversation{ID: newID("c"), Title: title, CreatedAt: now, UpdatedAt: now}
	if c.Title == "" {
		c.Title, c.AutoTitle = defaultTitle, true
	}
	if err := st.save(user, c); err != nil {
		return nil, err
	}
	st.trim(user)
	return c, nil
}

// trim drops user's oldest conversations beyond maxConversations.
func (st *convStore) trim(user string) {
	all, err := st.all(user)
	if err != nil || len(all) <= maxConversations {
		return
	}
	for _, c := range all[maxConversations:] {
		os.Remove(st.file(user, c.ID))
	}
}

// get returns one conversation.
func (st *convStore) get(user, id string) (*Conversation, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.load(user, id)
}

// update loads a conversation, applies fn and saves it.
func (st *convStore) update(user, id string, fn func(c *Conversation) error) (*Conversation, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	c, err := st.load(user, id)
	if err != nil {
		return nil, err
	}
	if err := fn(c); err != nil {
		return nil, err
	}
	c.UpdatedAt = st.now()
	if err := st.save(user, c); err != nil {
		return nil, err
	}
	return c, nil
}

// remove deletes a conversation.
func (st *convStore) remove(user, id string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, err := st.load(user, id); err != nil {
		return err
	}
	if err := os.Remove(st.file(user, id)); err != nil {
		return fmt.Errorf("delete conversation: %w", err)
	}
	return nil
}

// record stores v in conversation id: a new exchange named newXID, or,
// with replace, a new version of that exchange (which becomes current).
// It returns the exchange's id and the version's index.
func (st *convStore) record(user, id, replace, newXID string, v Version) (xid string, version int, err error) {
	_, err = st.update(user, id, func(c *Conversation) error {
		if replace != "" {
			e, _ := c.exchange(replace)
			if e == nil {
				return errExchangeNotFound
			}
			e.Versions = append(e.Versions, v)
			e.Current = len(e.Versions) - 1
			xid, version = e.ID, e.Current
			return nil
		}
		if len(c.Exchanges) >= maxExchangesPerConv {
			return badRequest("conversation_full", "この会話はやり取りが %d 件に達しました — 新しい会話を始めてください", maxExchangesPerConv)
		}
		e := Exchange{ID: newXID, Versions: []Version{v}}
		c.Exchanges = append(c.Exchanges, e)
		if c.AutoTitle && len(c.Exchanges) == 1 {
			c.Title = autoTitle(v.Question)
		}
		xid, version = e.ID, 0
		return nil
	})
	return xid, version, err
}

// autoTitle is a conversation's title made from its first question.
func autoTitle(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if utf8.RuneCountInString(q) > autoTitleRunes {
		return string([]rune(q)[:autoTitleRunes-1]) + "…"
	}
	return q
}

// checkTitle validates a title given by a person.
func checkTitle(t string) (string, error) {
	t = strings.Join(strings.Fields(t), " ")
	if n := utf8.RuneCountInString(t); n == 0 || n > maxTitleRunes || !utf8.ValidString(t) {
		return "", badRequest("invalid_title", "タイトルは 1〜%d 文字で入力してください", maxTitleRunes)
	}
	return t, nil
}
