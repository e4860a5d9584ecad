package web

import (
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/answer"
)

// sessionCookieAge is how long a browser keeps its session id (seconds).
const sessionCookieAge = 365 * 24 * 60 * 60

// Cookie names.
const (
	sessionCookie = "shirube_session" // browser session id (audit log, history)
	loginCookie   = "shirube_login"   // proof of the token, never the token itself
)

// session is one browser (or API) conversation: the assistant's
// conversation state, and the rendered exchanges shown when the page is
// reloaded.
type session struct {
	id   string
	conv *answer.Session

	mu      sync.Mutex
	last    time.Time
	history []exchange // oldest first, at most max
	max     int
}

// exchange is one question and its rendered answer, as the page shows it
// when it loads.
type exchange struct {
	Question string
	HTML     template.HTML
	// Of a conversation's exchange: its id, status (Status*), rating, the
	// rewritten query when it differs from the question, the version shown
	// and how many there are.
	ID        string
	Status    string
	Rating    string
	Rewritten string
	Version   int
	Versions  int
}

// add records an exchange, keeping the last max.
func (s *session) add(e exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, e)
	if over := len(s.history) - s.max; over > 0 {
		s.history = append([]exchange(nil), s.history[over:]...)
	}
}

// exchanges returns a copy of the kept exchanges.
func (s *session) exchanges() []exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]exchange(nil), s.history...)
}

// sessionStore keeps sessions in memory, dropping the least recently used
// beyond max and any idle for longer than idle.
type sessionStore struct {
	max     int
	idle    time.Duration
	history int
	newConv func() *answer.Session

	mu sync.Mutex
	m  map[string]*session
}

func newSessionStore(max int, idle time.Duration, newConv func() *answer.Session) *sessionStore {
	return &sessionStore{max: max, idle: idle, history: answer.MaxConversationHistory, newConv: newConv, m: map[string]*session{}}
}

// validSessionID accepts the ids this server issues and reasonable ids
// chosen by API clients.
var validSessionID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// newSessionID returns 128 random bits in hex.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// get returns the session id, creating it when it is unknown.
func (st *sessionStore) get(id string) *session {
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if s, ok := st.m[id]; ok {
		s.mu.Lock()
		fresh := now.Sub(s.last) <= st.idle
		s.last = now
		s.mu.Unlock()
		if fresh {
			return s
		}
	}
	s := &session{id: id, conv: st.newConv(), last: now, max: st.history}
	st.m[id] = s
	if len(st.m) > st.max {
		st.evictLocked()
	}
	return s
}

// peek returns the session id without creating or touching it.
func (st *sessionStore) peek(id string) (*session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.m[id]
	return s, ok
}

// drop forgets the session id.
func (st *sessionStore) drop(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.m, id)
}

// evictLocked removes the least recently used session.
func (st *sessionStore) evictLocked() {
	var oldID string
	var oldT time.Time
	for id, s := range st.m {
		s.mu.Lock()
		t := s.last
		s.mu.Unlock()
		if oldID == "" || t.Before(oldT) {
			oldID, oldT = id, t
		}
	}
	delete(st.m, oldID)
}

// browserSession returns the id in the session cookie, issuing a new
// cookie when there is none (or it is malformed).
func browserSession(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil && validSessionID.MatchString(c.Value) {
		return c.Value
	}
	id := newSessionID()
	http.SetCookie(w, &http.Cookie{
		// Kept for a year: the user's conversations are filed under it.
		Name: sessionCookie, Value: id, Path: "/", MaxAge: sessionCookieAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secureRequest(r),
	})
	return id
}
