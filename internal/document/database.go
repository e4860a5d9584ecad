package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// PageFile returns the identity of one page of f: the slash-separated path
// of its Markdown file, starting with the base name of dbDir, e.g.
//
//	PageFile("./database", File{Rel: "runbooks/incident_response.md", Stem: "incident_response"}, 1)
//	== "database/runbooks/incident_response/page_001.md"
//
// Only dbDir's base name, f.Rel's folder, f.Stem and page are used, so the
// identity is the same on every machine. Citations, the audit log and the
// reference metrics all use it.
func PageFile(dbDir string, f File, page int) string {
	return path.Join(DocumentDir(dbDir, f), pageName(page))
}

// DocumentDir returns the identity of the folder holding f's pages, e.g.
// "database/runbooks/incident_response".
func DocumentDir(dbDir string, f File) string {
	return path.Join(filepath.Base(filepath.Clean(dbDir)), path.Dir(f.Rel), stemOf(f))
}

// pageName is the file name of a page: page_001.md, page_012.md, page_1000.md.
func pageName(page int) string { return fmt.Sprintf("page_%03d.md", page) }

// pageFileRE matches the page files WriteDatabase creates.
var pageFileRE = regexp.MustCompile(`^page_([0-9]{3,})\.md$`)

// stemOf returns f.Stem, or the base name without extension when a caller
// built f by hand without one.
func stemOf(f File) string {
	if f.Stem != "" {
		return f.Stem
	}
	base := path.Base(f.Rel)
	return strings.TrimSuffix(base, path.Ext(base))
}

// diskDir is where f's page files live on disk.
func diskDir(dbDir string, f File) string {
	return filepath.Join(dbDir, filepath.FromSlash(path.Dir(f.Rel)), stemOf(f))
}

// A FileWriter writes one whole file of the page database. Every page
// file goes through one, so that tests can inject faults such as a full
// disk; nil means DiskWriter.
type FileWriter interface {
	WriteFile(name string, data []byte) error
}

// DiskWriter is the real FileWriter: it replaces name atomically (temporary
// file + rename) unless it already holds exactly data. Any error — a full
// disk included — leaves the old file in place.
type DiskWriter struct{}

// WriteFile implements FileWriter.
func (DiskWriter) WriteFile(name string, data []byte) error { return writeIfChanged(name, data) }

func orDisk(w FileWriter) FileWriter {
	if w == nil {
		return DiskWriter{}
	}
	return w
}

// WriteDatabase writes each page of doc to its page file under dbDir
// through w (nil: DiskWriter) and returns the page identities (see
// PageFile) in page order.
//
// A page file holds the page's Markdown, ending with a newline unless it is
// empty. Files are replaced atomically (temporary file + rename) and are not
// rewritten when their content is unchanged. Page files left from an earlier,
// longer version of the document are removed.
func WriteDatabase(ctx context.Context, dbDir string, f File, doc Document, w FileWriter) ([]string, error) {
	if f.Rel == "" || path.IsAbs(f.Rel) || strings.HasPrefix(path.Clean(f.Rel), "../") {
		return nil, fmt.Errorf("writing page database: source path %q must be relative to the data folder", f.Rel)
	}
	if len(doc.Pages) == 0 {
		return nil, fmt.Errorf("writing page database for %s: document has no pages", f.Rel)
	}
	dir := diskDir(dbDir, f)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating page folder: %w — check that %s is writable", err, dbDir)
	}
	ids := make([]string, 0, len(doc.Pages))
	keep := map[string]bool{}
	for i, p := range doc.Pages {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("writing pages of %s: %w", f.Rel, err)
		}
		n := p.Number
		if n <= 0 {
			n = i + 1
		}
		name := pageName(n)
		keep[name] = true
		text := p.Text
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if err := orDisk(w).WriteFile(filepath.Join(dir, name), []byte(text)); err != nil {
			return nil, fmt.Errorf("writing page %d of %s: %w", n, f.Rel, err)
		}
		ids = append(ids, PageFile(dbDir, f, n))
	}
	if err := removePages(dir, func(name string) bool { return !keep[name] }); err != nil {
		return nil, fmt.Errorf("removing stale pages of %s: %w", f.Rel, err)
	}
	return ids, nil
}

// RemoveDocument deletes the page files of a source that no longer exists.
// Only f.Rel and f.Stem are used. Other entries in the page folder (such as
// the folder of a source in a data sub-folder of the same name) are left
// alone; the page folder and its parents are removed once empty. Removing a
// document that has no pages is not an error.
func RemoveDocument(ctx context.Context, dbDir string, f File) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := diskDir(dbDir, f)
	if err := removePages(dir, func(string) bool { return true }); err != nil {
		return fmt.Errorf("removing pages of %s: %w", f.Rel, err)
	}
	// Remove now-empty folders up to, not including, dbDir.
	root := filepath.Clean(dbDir)
	for d := dir; d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if err := os.Remove(d); err != nil {
			break // not empty, or already gone
		}
	}
	return nil
}

// removePages deletes the page_NNN.md files in dir for which drop is true.
// A missing dir is not an error.
func removePages(dir string, drop func(name string) bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !pageFileRE.MatchString(name) || !drop(name) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeIfChanged atomically replaces name with data unless it already holds
// exactly data.
func writeIfChanged(name string, data []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// PageNumber returns the page number of a page identity or page file name
// ("database/a/b/page_012.md" → 12), or false if it is not one.
func PageNumber(id string) (int, bool) {
	m := pageFileRE.FindStringSubmatch(path.Base(id))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}
