package diffeval

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Twins describes a data folder that holds the same documents twice: as
// HTML and as plain text or Markdown with the same file stem (the law set
// keeps html/<hash>.html beside text/<hash>.txt). Indexed as one corpus,
// both configurations of a diff-eval would retrieve the text copies too,
// and the comparison of HTML modes would be blurred.
type Twins struct {
	Count   int       // stems present both as HTML and as text
	Example [2]string // one pair, relative to the data folder: HTML, text
	// HTMLDir is the subfolder (relative) holding every HTML twin, when
	// they share one and no text twin is in it; "" otherwise.
	HTMLDir string
}

// FindTwins walks dir and returns the HTML/text twins it holds. A folder
// without twins gives Count 0.
func FindTwins(dir string) (Twins, error) {
	html := map[string]string{} // stem → relative path
	text := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		ext := strings.ToLower(filepath.Ext(p))
		stem := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		switch ext {
		case ".html", ".htm":
			html[stem] = rel
		case ".txt", ".md", ".markdown":
			text[stem] = rel
		}
		return nil
	})
	if err != nil {
		return Twins{}, fmt.Errorf("look for HTML/text copies in %s: %w", dir, err)
	}
	var stems []string
	for s := range html {
		if _, ok := text[s]; ok {
			stems = append(stems, s)
		}
	}
	sort.Strings(stems)
	t := Twins{Count: len(stems)}
	if t.Count == 0 {
		return t, nil
	}
	t.Example = [2]string{html[stems[0]], text[stems[0]]}
	hd := filepath.Dir(html[stems[0]])
	for _, s := range stems {
		if filepath.Dir(html[s]) != hd || filepath.Dir(text[s]) == hd {
			hd = ""
			break
		}
	}
	if hd != "." {
		t.HTMLDir = hd
	}
	return t, nil
}

// Warning is the one-line warning for a data folder with twins, saying how
// to point at one copy; "" when there are none.
func (t Twins) Warning(dir string) string {
	if t.Count == 0 {
		return ""
	}
	fix := "move the text copies out, or point --data at a folder holding only the HTML"
	if t.HTMLDir != "" {
		fix = "point --data at the HTML copy: --data " + filepath.Join(dir, t.HTMLDir)
	}
	return fmt.Sprintf("%s holds %d document(s) both as HTML and as text (e.g. %s and %s); they are indexed as one corpus, so both configurations also retrieve the text copies and the HTML comparison is blurred — %s",
		dir, t.Count, t.Example[0], t.Example[1], fix)
}
