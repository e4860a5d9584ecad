package document

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// IsPageFile reports whether a file name is a page of the database: a page
// written from a source (page_NNN.md) or a copy of one that folder-structure
// optimisation added under a better-named folder, which keeps the copied
// page's name or adds _2, _3, … when it is taken (page_008_2.md).
func IsPageFile(name string) bool {
	return strings.HasPrefix(name, "page_") && strings.HasSuffix(name, ".md")
}

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

// Database is the per-page Markdown database (database/<folder>/<stem>/page_NNN.md)
// and the one owner of page identity (PageFile). The index build syncs every
// source into it (Sync), lists the copies that folder-structure
// optimisation added (Copies), checks that cited pages are still there
// (Exists) and removes the pages of sources that are gone (Remove); the
// index itself only turns pages into chunks, postings and vectors.
type Database struct {
	Dir string // the database folder, e.g. ./database
	// Writer writes the page files; nil means the disk (DiskWriter).
	// Tests inject a full disk through it.
	Writer FileWriter
	// Categorize, when set, groups each PDF's pages into section folders
	// (database/<folder>/<stem>/<category>/page_NNN.md) by the LLM, the PDF
	// outline or page headings.
	Categorize *CategorizeOptions
	Warn       func(string) // optional one-line warnings
}

// Source is what the database holds for one source file: the document as
// extracted, the file it came from and its page identities in page order.
type Source struct {
	Doc   Document
	File  File
	Pages []string
}

// Sync brings the pages of source f up to date. prev is what the previous
// sync of f produced (nil for a new source). An unchanged source — same
// size, mtime and stem with every page file present — is not even read:
// Sync returns prev with changed false. A source whose content hash did
// not change is not rewritten either (changed false, the time refreshed).
// Otherwise f is extracted, its pages written, and changed is true. A
// source with pages left for OCR (Document.OCRPending) counts as changed
// once ex can run OCR.
//
// A file that cannot be read, or whose own page folder cannot be written,
// is a Skip. A storage failure — no space, a quota, a read-only or failing
// disk — would hit every source after this one too, so it is an error.
func (db Database) Sync(ctx context.Context, ex *Extractor, f File, prev *Source) (src Source, changed bool, skip *Skip, err error) {
	if prev != nil && prev.Doc.OCRPending && ex.CanOCR(ctx) {
		prev = nil // pages left for OCR can be read now
	}
	if prev != nil && prev.Doc.Size == f.Size && prev.Doc.ModTime.Equal(f.ModTime) && prev.File.Stem == f.Stem && db.Exists(prev.Pages) {
		prev.File = f
		return *prev, false, nil, nil
	}
	doc, err := ex.Extract(ctx, f)
	if err != nil {
		return Source{}, false, &Skip{Path: f.Rel, Reason: strings.TrimPrefix(err.Error(), f.Rel+": ")}, nil
	}
	if prev != nil && prev.Doc.Hash == doc.Hash && prev.File.Stem == f.Stem && db.Exists(prev.Pages) && db.Categorize == nil {
		// Touched but not changed: keep the pages, refresh the time.
		prev.Doc.ModTime, prev.File = doc.ModTime, f
		return *prev, false, nil, nil
	}
	var ids []string
	if db.Categorize != nil && doc.Kind == PDF {
		cats, cerr := Categorize(ctx, doc, f.Path, *db.Categorize)
		if cerr != nil {
			if db.Warn != nil {
				db.Warn(fmt.Sprintf("%s: pages not categorised: %v", f.Rel, cerr))
			}
			cats = make([]string, len(doc.Pages))
		}
		ids, err = WriteCategorized(ctx, db.Dir, f, doc, cats, db.Writer)
	} else {
		ids, err = WriteDatabase(ctx, db.Dir, f, doc, db.Writer)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return Source{}, false, nil, ctx.Err()
	case StorageFailure(err):
		return Source{}, false, nil, fmt.Errorf("write page database %s: %w", db.Dir, err)
	default: // this document's folder only, e.g. a file in the way
		return Source{}, false, &Skip{Path: f.Rel, Reason: "write page database: " + err.Error()}, nil
	}
	return Source{Doc: doc, File: f, Pages: ids}, true, nil, nil
}

// StorageFailure reports an error of the storage itself — no space left, a
// quota, a read-only or failing disk — which would hit every write after
// this one too.
func StorageFailure(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Copy is a page file that no source produced: a copy that folder-structure
// optimisation placed in a better-named folder (RL rollback and
// `optimize --undo` delete it again).
type Copy struct {
	ID      string // page identity, e.g. "database/温度設定/page_008.md"
	Page    int    // page number from the name; 0 for a renamed copy (page_008_2.md)
	Folder  string // its folder below the database, as words: "冷蔵庫 / 温度の設定"; "" at the top
	Text    string
	Hash    string // hex SHA-256 of the file
	ModTime time.Time
	Size    int64
}

// Copies lists, in walk order, the page files under the database that are
// not source pages: known reports the identities that belong to sources
// (this sync's, and those of earlier syncs, so that the pages of a source
// that was skipped or removed never come back as a copy). Links are not
// followed; unreadable files are left out. A missing database has no copies.
func (db Database) Copies(ctx context.Context, known func(id string) bool) ([]Copy, error) {
	base := filepath.Base(filepath.Clean(db.Dir))
	var out []Copy
	err := filepath.WalkDir(db.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if p == db.Dir {
				return filepath.SkipAll
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || d.Type()&os.ModeSymlink != 0 || !IsPageFile(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(db.Dir, p)
		if err != nil {
			return nil
		}
		id := base + "/" + filepath.ToSlash(rel)
		if known(id) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		c := Copy{ID: id, Text: string(b), Hash: hex.EncodeToString(sum[:])}
		c.Page, _ = PageNumber(id)
		if info, err := d.Info(); err == nil {
			c.ModTime, c.Size = info.ModTime(), info.Size()
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
			c.Folder = strings.ReplaceAll(strings.ReplaceAll(dir, "/", " / "), "_", " ")
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// Exists reports whether every page identity in ids has its file in the
// database.
func (db Database) Exists(ids []string) bool {
	parent := filepath.Dir(filepath.Clean(db.Dir))
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(parent, filepath.FromSlash(id))); err != nil {
			return false
		}
	}
	return true
}

// Remove deletes page files by identity and the folders they leave empty
// (document and category folders), up to but not including the database
// folder. Pages already gone are not an error.
func (db Database) Remove(ids []string) {
	root := filepath.Clean(db.Dir)
	parent := filepath.Dir(root)
	for _, id := range ids {
		p := filepath.Join(parent, filepath.FromSlash(id))
		os.Remove(p)
		for d := filepath.Dir(p); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty, or already gone
			}
		}
	}
}
