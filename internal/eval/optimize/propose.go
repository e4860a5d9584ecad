package optimize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/eval/metrics"
	"github.com/shirube/shirube/internal/llm"
	"golang.org/x/text/unicode/norm"
)

// Request is what a Proposer sees for one failed question.
type Request struct {
	Question string
	Missed   []string // page identities that were not retrieved
	Tree     string   // depth-limited listing of the scope (see ListTree)
	Folders  []string // existing folders, relative to the scope
	Tried    []string // folders already proposed for this question (RL attempts)
	Avoid    []string // folders that hold a missed page or are a document's page folder, relative to the scope
}

// Proposal is a folder, relative to the scope, to copy the missed pages to.
type Proposal struct {
	Folder string `json:"folder"`
	Reason string `json:"reason"`
}

// Proposer proposes a better folder for pages a question did not find.
type Proposer interface {
	Propose(ctx context.Context, req Request) (Proposal, error)
}

// Tokenizer extracts the key terms of a question.
type Tokenizer interface {
	Terms(text string) []string
}

// TermTokenizer is the dictionary-free Tokenizer: metrics.Terms, i.e. the
// kanji, katakana and other-script word runs of the text.
type TermTokenizer struct{}

// Terms implements Tokenizer.
func (TermTokenizer) Terms(text string) []string { return metrics.Terms(text) }

// LLMProposer asks a model for a folder. The model must reply with exactly
// {"folder": "relative/path", "reason": "..."}; anything else is an error
// and the row is skipped.
type LLMProposer struct {
	LLM   eval.Completer
	Model string // "" means the client's default
}

const proposeSystem = `You reorganise a folder tree of Markdown pages so that a search finds the right page for a question.
A question failed to retrieve the pages listed. Propose ONE folder, relative to the root of the tree shown, to copy them to, so that the folder path itself describes what the question asks.
Prefer an EXISTING folder when one fits the question; create a new folder only if no existing one is suitable.
Never use "..", absolute paths, or a folder that already failed.
Reply with a single JSON object and nothing else: {"folder": "relative/path", "reason": "one sentence"}`

// Propose implements Proposer.
func (p LLMProposer) Propose(ctx context.Context, req Request) (Proposal, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\nPages not found:\n", req.Question)
	for _, m := range req.Missed {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	fmt.Fprintf(&b, "\nExisting folders:\n%s\n", req.Tree)
	if len(req.Tried) > 0 {
		fmt.Fprintf(&b, "\nFolders that already failed (do not propose again): %s\n", strings.Join(req.Tried, ", "))
	}
	if len(req.Avoid) > 0 {
		fmt.Fprintf(&b, "\nFolders that must not receive the copy (they hold a missed page or are another document's page folder; neither them nor their subfolders): %s\n", strings.Join(req.Avoid, ", "))
	}
	zero := 0.0
	resp, err := p.LLM.Complete(ctx, llm.Request{
		Model:       p.Model,
		System:      proposeSystem,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
		Temperature: &zero,
		JSON:        true,
	})
	if err != nil {
		return Proposal{}, fmt.Errorf("folder proposal: %w", err)
	}
	return ParseProposal(resp.Text)
}

// ParseProposal reads the proposer's JSON. One surrounding ```json fence
// is tolerated; the object must have a non-empty string "folder".
func ParseProposal(raw string) (Proposal, error) {
	s := strings.TrimSpace(raw)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		s = strings.TrimSpace(s[3 : len(s)-3])
		s = strings.TrimSpace(strings.TrimPrefix(s, "json"))
	}
	var v struct {
		Folder *string `json:"folder"`
		Reason string  `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&v); err != nil {
		return Proposal{}, fmt.Errorf("folder proposal is not valid JSON: %w", err)
	}
	if dec.More() {
		return Proposal{}, errors.New("folder proposal has text after the JSON object")
	}
	if v.Folder == nil || strings.TrimSpace(*v.Folder) == "" {
		return Proposal{}, errors.New(`folder proposal has no "folder"`)
	}
	return Proposal{Folder: strings.TrimSpace(*v.Folder), Reason: strings.Join(strings.Fields(v.Reason), " ")}, nil
}

// OfflineProposer proposes folders without a model. It takes the question's
// key terms from Tokenizer (TermTokenizer when nil) and
//
//  1. prefers an existing folder whose own name shares terms with the
//     question. A term and a name match when one contains the other (after
//     NFKC and lower-casing). Folders rank by the total length in
//     characters of the terms their own name shares (longer terms are more
//     specific: 温度設定 beats 冷蔵庫), then by terms shared anywhere in the
//     path (冷蔵庫/温度設定 beats 温度設定), then deeper first, then by path;
//  2. otherwise names a new folder at the top of the scope from the top key
//     terms: "t1_t2", then "t1", "t2", "t2_t3", "t3", ...
//
// Folders in Request.Tried, and folders in or below Request.Avoid, are
// never proposed, so each RL attempt gets a different folder.
type OfflineProposer struct {
	Tokenizer Tokenizer
}

// Propose implements Proposer.
func (p OfflineProposer) Propose(_ context.Context, req Request) (Proposal, error) {
	tok := p.Tokenizer
	if tok == nil {
		tok = TermTokenizer{}
	}
	var terms []string
	for _, t := range tok.Terms(req.Question) {
		if t = strings.ToLower(norm.NFKC.String(strings.TrimSpace(t))); t != "" && !contains(terms, t) {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return Proposal{}, errors.New("no key terms in the question to name a folder after")
	}
	skip := func(f string) bool {
		if contains(req.Tried, f) {
			return true
		}
		for _, a := range req.Avoid {
			if f == a || strings.HasPrefix(f, a+"/") {
				return true
			}
		}
		return false
	}

	type cand struct {
		folder string
		own    int      // rune length of the terms the folder's own name shares
		shared []string // terms shared by any component of the path
		depth  int
	}
	matches := func(component, term string) bool {
		c := strings.ToLower(norm.NFKC.String(component))
		return strings.Contains(c, term) || (len([]rune(c)) >= 2 && strings.Contains(term, c))
	}
	var cands []cand
	for _, f := range req.Folders {
		if skip(f) {
			continue
		}
		c := cand{folder: f, depth: strings.Count(f, "/")}
		for _, t := range terms {
			if matches(path.Base(f), t) {
				c.own += len([]rune(t))
			}
			for comp := range strings.SplitSeq(f, "/") {
				if matches(comp, t) {
					c.shared = append(c.shared, t)
					break
				}
			}
		}
		if c.own > 0 {
			cands = append(cands, c)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.own != b.own {
			return a.own > b.own
		}
		if len(a.shared) != len(b.shared) {
			return len(a.shared) > len(b.shared)
		}
		if a.depth != b.depth {
			return a.depth > b.depth
		}
		return a.folder < b.folder
	})
	if len(cands) > 0 {
		c := cands[0]
		return Proposal{Folder: c.folder, Reason: "existing folder shares the key terms " + strings.Join(c.shared, ", ")}, nil
	}
	for _, name := range newFolderNames(Compounds(req.Question, terms)) {
		if !skip(name) && !contains(req.Folders, name) {
			return Proposal{Folder: name, Reason: "no existing folder matches; new folder named after the key terms"}, nil
		}
	}
	return Proposal{}, errors.New("every folder derived from the question's key terms was already tried")
}

// Compounds joins the terms of question that stand next to each other in
// it into whole words, in order of first appearance without repeats. A
// tokenizer cuts 化粧品基準 into 化粧 / 品 / 基準 and 公衆無線LAN into
// 公衆 / 無線 / lan; a folder named 化粧_品 or 品_基準 is a fragment no one
// would file a page under, while 化粧品基準 is the noun compound the
// question used. Terms are matched in the question after NFKC and
// lower-casing; particles and punctuation between them (の, を, 、) break a
// compound, so 冷蔵庫の温度設定 gives 冷蔵庫 and 温度設定. A term not found
// in the question is kept as it is.
func Compounds(question string, terms []string) []string {
	q := strings.ToLower(norm.NFKC.String(question))
	var out []string
	add := func(c string) {
		if c != "" && !contains(out, c) {
			out = append(out, c)
		}
	}
	at := 0 // byte offset in q where the search for the next term starts
	cur, end := "", -1
	for _, t := range terms {
		i := strings.Index(q[at:], t)
		if i < 0 {
			add(cur)
			cur, end = "", -1
			add(t)
			continue
		}
		i += at
		if i == end {
			cur += t
		} else {
			add(cur)
			cur = t
		}
		end = i + len(t)
		at = end
	}
	add(cur)
	return out
}

// newFolderNames lists new-folder names from terms in order of preference.
func newFolderNames(terms []string) []string {
	var out []string
	if len(terms) == 1 {
		return []string{terms[0]}
	}
	for i := 0; i < len(terms); i++ {
		if i+1 < len(terms) {
			out = append(out, terms[i]+"_"+terms[i+1])
		}
		out = append(out, terms[i])
	}
	return out
}

// ListTree lists the folders under scopeDir up to depth levels, skipping
// hidden folders and symbolic links, at most limit folders. It returns an
// indented listing with the number of pages (.md files) in each folder, as
// shown to the proposer, and the folders as slash paths relative to scopeDir.
func ListTree(scopeDir string, depth, limit int) (tree string, folders []string, err error) {
	var b strings.Builder
	more := 0
	err = filepath.WalkDir(scopeDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == scopeDir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() { // symlinks and files are not folders
			return nil
		}
		rel, _ := filepath.Rel(scopeDir, p)
		rel = filepath.ToSlash(rel)
		level := strings.Count(rel, "/") + 1
		if level > depth {
			return filepath.SkipDir
		}
		if len(folders) >= limit {
			more++
			return nil
		}
		folders = append(folders, rel)
		fmt.Fprintf(&b, "%s%s/ (%d pages)\n", strings.Repeat("  ", level-1), path.Base(rel), countPages(p))
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("list %s: %w", scopeDir, err)
	}
	if more > 0 {
		fmt.Fprintf(&b, "... and %d more folders\n", more)
	}
	if len(folders) == 0 {
		b.WriteString("(no folders yet)\n")
	}
	return b.String(), folders, nil
}

func countPages(dir string) int {
	es, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ".md") {
			n++
		}
	}
	return n
}
