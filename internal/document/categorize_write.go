package document

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// WriteCategorized writes each page of doc into its category folder,
// database/<folder>/<stem>/<category>/page_NNN.md (seed 000's layout), and
// returns the page identities in page order. categories[i] is the category
// of doc.Pages[i]; an empty category writes the page directly into the
// document folder, as WriteDatabase does. Page files of this document that
// are not part of the new layout (an earlier categorisation or a longer
// earlier version) are removed, and category folders left empty with them.
// Pages are written through w (nil: DiskWriter).
func WriteCategorized(ctx context.Context, dbDir string, f File, doc Document, categories []string, w FileWriter) ([]string, error) {
	if len(categories) != len(doc.Pages) {
		return nil, fmt.Errorf("writing page database for %s: %d categories for %d pages", f.Rel, len(categories), len(doc.Pages))
	}
	if f.Rel == "" || path.IsAbs(f.Rel) || strings.HasPrefix(path.Clean(f.Rel), "../") {
		return nil, fmt.Errorf("writing page database: source path %q must be relative to the data folder", f.Rel)
	}
	dir := diskDir(dbDir, f)
	keep := map[string]bool{}
	ids := make([]string, 0, len(doc.Pages))
	for i, p := range doc.Pages {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("writing pages of %s: %w", f.Rel, err)
		}
		n := p.Number
		if n <= 0 {
			n = i + 1
		}
		cat := ""
		if categories[i] != "" {
			cat = SanitizeFolder(categories[i])
		}
		rel := filepath.Join(cat, pageName(n))
		keep[rel] = true
		if err := os.MkdirAll(filepath.Join(dir, cat), 0o755); err != nil {
			return nil, fmt.Errorf("creating page folder: %w — check that %s is writable", err, dbDir)
		}
		text := p.Text
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if err := orDisk(w).WriteFile(filepath.Join(dir, rel), []byte(text)); err != nil {
			return nil, fmt.Errorf("writing page %d of %s: %w", n, f.Rel, err)
		}
		ids = append(ids, CategorizedPageFile(dbDir, f, cat, n))
	}
	// Remove page files of this document that the new layout does not have:
	// in the document folder itself and one level of category folders.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			if isPageName(e.Name()) && !keep[e.Name()] {
				os.Remove(filepath.Join(dir, e.Name()))
			}
			continue
		}
		sub := filepath.Join(dir, e.Name())
		inner, _ := os.ReadDir(sub)
		pagesOnly := true
		for _, ie := range inner {
			if ie.IsDir() || !isPageName(ie.Name()) {
				pagesOnly = false
				continue
			}
			if !keep[filepath.Join(e.Name(), ie.Name())] {
				os.Remove(filepath.Join(sub, ie.Name()))
			}
		}
		if pagesOnly {
			os.Remove(sub) // only succeeds when empty
		}
	}
	return ids, nil
}

func isPageName(name string) bool {
	var n int
	_, err := fmt.Sscanf(name, "page_%d.md", &n)
	return err == nil && strings.HasSuffix(name, ".md")
}
