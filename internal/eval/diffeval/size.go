package diffeval

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Sizes is what one configuration occupies on disk (seed 004 weighs
// Markdown conversion against a storage budget): the source files, the page
// database made from them, and every index generation.
type Sizes struct {
	SourceBytes   int64 `json:"source_bytes"`
	DatabaseBytes int64 `json:"page_database_bytes"`
	// HTMLSourceBytes are the bytes of the HTML sources (.html, .htm) and
	// HTMLPageBytes those of their pages in the database;
	// MarkdownHTMLRatio is HTMLPageBytes / HTMLSourceBytes (0 without HTML
	// sources): how much of the HTML a page database keeps.
	HTMLSourceBytes   int64             `json:"html_source_bytes"`
	HTMLPageBytes     int64             `json:"html_page_bytes"`
	MarkdownHTMLRatio float64           `json:"markdown_html_ratio"`
	IndexGenerations  []GenerationBytes `json:"index_generations"`
}

// GenerationBytes is the size of one index generation folder.
type GenerationBytes struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// IndexBytes is the total of every index generation.
func (s Sizes) IndexBytes() int64 {
	var n int64
	for _, g := range s.IndexGenerations {
		n += g.Bytes
	}
	return n
}

// MeasureSizes measures the source folder, the page database and the
// index folder's generations (its gen-* subfolders). A folder that does not
// exist counts 0; "" is skipped.
func MeasureSizes(dataDir, databaseDir, indexDir string) (Sizes, error) {
	var s Sizes
	var err error
	if s.SourceBytes, err = treeBytes(dataDir); err != nil {
		return s, err
	}
	if s.DatabaseBytes, err = treeBytes(databaseDir); err != nil {
		return s, err
	}
	if dataDir != "" {
		err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			ext := strings.ToLower(filepath.Ext(p))
			if ext != ".html" && ext != ".htm" {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			s.HTMLSourceBytes += fi.Size()
			rel, err := filepath.Rel(dataDir, p)
			if err != nil || databaseDir == "" {
				return err
			}
			n, err := treeBytes(filepath.Join(databaseDir, strings.TrimSuffix(rel, filepath.Ext(rel))))
			s.HTMLPageBytes += n
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			return s, fmt.Errorf("measure HTML sources in %s: %w", dataDir, err)
		}
	}
	if s.HTMLSourceBytes > 0 {
		s.MarkdownHTMLRatio = float64(s.HTMLPageBytes) / float64(s.HTMLSourceBytes)
	}
	if indexDir != "" {
		entries, err := os.ReadDir(indexDir)
		if err != nil && !os.IsNotExist(err) {
			return s, fmt.Errorf("measure index %s: %w", indexDir, err)
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), "gen-") {
				continue
			}
			n, err := treeBytes(filepath.Join(indexDir, e.Name()))
			if err != nil {
				return s, err
			}
			s.IndexGenerations = append(s.IndexGenerations, GenerationBytes{Name: e.Name(), Bytes: n})
		}
		sort.Slice(s.IndexGenerations, func(i, j int) bool { return s.IndexGenerations[i].Name < s.IndexGenerations[j].Name })
	}
	return s, nil
}

// treeBytes is the total size of the regular files under dir; 0 when dir
// is "" or missing.
func treeBytes(dir string) (int64, error) {
	if dir == "" {
		return 0, nil
	}
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measure %s: %w", dir, err)
	}
	return n, nil
}

// Line renders the sizes in one line: "source 1.2 MB, page database
// 0.8 MB, index 3.4 MB (gen-000004 3.4 MB), Markdown/HTML 0.42".
func (s Sizes) Line() string {
	gens := make([]string, len(s.IndexGenerations))
	for i, g := range s.IndexGenerations {
		gens[i] = g.Name + " " + HumanBytes(g.Bytes)
	}
	out := fmt.Sprintf("source %s, page database %s, index %s (%s)", HumanBytes(s.SourceBytes), HumanBytes(s.DatabaseBytes), HumanBytes(s.IndexBytes()), strings.Join(gens, ", "))
	if s.HTMLSourceBytes > 0 {
		out += fmt.Sprintf(", Markdown/HTML %.2f (%s of pages from %s of HTML)", s.MarkdownHTMLRatio, HumanBytes(s.HTMLPageBytes), HumanBytes(s.HTMLSourceBytes))
	}
	return out
}

// HumanBytes renders n in B, KB, MB or GB (powers of 1024).
func HumanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}
