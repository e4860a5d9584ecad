package optimize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Manifest records every file and folder a run created, so Undo can put
// the tree back. Paths are slash-separated and relative to Root.
type Manifest struct {
	Version int            `json:"version"`
	Created time.Time      `json:"created"`
	Root    string         `json:"root"` // absolute directory the paths are relative to
	Files   []ManifestFile `json:"files"`
	Dirs    []string       `json:"dirs"` // in creation order, parents first
}

// ManifestFile is one copied page.
type ManifestFile struct {
	Path   string `json:"path"`   // the copy
	Source string `json:"source"` // the page it was copied from
	SHA256 string `json:"sha256"` // hex digest of the copy as written
}

// manifestFile keeps the manifest on disk current after every change, so a
// crash never leaves copies that Undo does not know about.
type manifestFile struct {
	mu   sync.Mutex
	path string
	m    Manifest
}

func (mf *manifestFile) update(change func(*Manifest)) error {
	mf.mu.Lock()
	defer mf.mu.Unlock()
	change(&mf.m)
	return writeJSONAtomic(mf.path, mf.m)
}

func writeJSONAtomic(p string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".manifest-*.tmp")
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write manifest %s: %w", p, werr)
	}
	return nil
}

// copied is the outcome of copyPage: the new file and the folders created
// for it, all relative to the root.
type copied struct {
	file ManifestFile
	dirs []string
	// reused marks a byte-identical copy that was already in the folder:
	// it becomes the alias, and a rollback leaves it alone.
	reused bool
}

// copyPage copies root/src into root/dir, creating dir as needed. It never
// overwrites: if the name is taken, "_2", "_3", ... is added before the
// extension. The copy and the new folders are recorded in mf before the
// function returns.
func copyPage(ctx context.Context, root, src, dir string, mf *manifestFile) (copied, error) {
	var c copied
	if err := ctx.Err(); err != nil {
		return c, err
	}
	// Create the folder one level at a time, remembering what was new.
	cur := ""
	for part := range strings.SplitSeq(dir, "/") {
		cur = path.Join(cur, part)
		err := os.Mkdir(filepath.Join(root, filepath.FromSlash(cur)), 0o755)
		switch {
		case err == nil:
			c.dirs = append(c.dirs, cur)
		case errors.Is(err, fs.ErrExist):
		default:
			return c, rollbackDirs(root, c.dirs, fmt.Errorf("create folder %s: %w", cur, err))
		}
	}
	if len(c.dirs) > 0 {
		if err := mf.update(func(m *Manifest) { m.Dirs = append(m.Dirs, c.dirs...) }); err != nil {
			return c, err
		}
	}
	in, err := os.Open(filepath.Join(root, filepath.FromSlash(src)))
	if err != nil {
		return c, fmt.Errorf("open missed page: %w", err)
	}
	defer in.Close()
	base := path.Base(src)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s_%d%s", stem, n, ext)
		}
		rel := path.Join(dir, name)
		out, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(rel)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && n < 10000 {
			continue
		}
		if err != nil {
			return c, fmt.Errorf("create copy in %s: %w", dir, err)
		}
		h := sha256.New()
		_, werr := io.Copy(io.MultiWriter(out, h), in)
		if cerr := out.Close(); werr == nil {
			werr = cerr
		}
		c.file = ManifestFile{Path: rel, Source: src, SHA256: hex.EncodeToString(h.Sum(nil))}
		if werr != nil {
			os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
			return c, fmt.Errorf("copy %s to %s: %w", src, rel, werr)
		}
		return c, mf.update(func(m *Manifest) { m.Files = append(m.Files, c.file) })
	}
}

// rollbackDirs removes dirs (deepest first) if empty and returns err.
func rollbackDirs(root string, dirs []string, err error) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(filepath.Join(root, filepath.FromSlash(dirs[i])))
	}
	return err
}

// remove deletes a copy made by copyPage and every folder above it that
// this run created and that is now empty — its own, and those another
// row's copy created first and left behind when it was rolled back — and
// drops them from the manifest: the RL rollback leaves no empty folder.
func (c copied) remove(root string, mf *manifestFile) error {
	if c.reused {
		return nil
	}
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(c.file.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("roll back %s: %w", c.file.Path, err)
	}
	mf.mu.Lock()
	created := append([]string(nil), mf.m.Dirs...)
	mf.mu.Unlock()
	created = append(created, c.dirs...)
	var gone []string
	for d := path.Dir(c.file.Path); d != "." && d != "/" && contains(created, d); d = path.Dir(d) {
		if os.Remove(filepath.Join(root, filepath.FromSlash(d))) != nil {
			break // not empty: another copy lives there
		}
		gone = append(gone, d)
	}
	return mf.update(func(m *Manifest) {
		m.Files = deleteFunc(m.Files, func(f ManifestFile) bool { return f.Path == c.file.Path })
		m.Dirs = deleteFunc(m.Dirs, func(d string) bool { return contains(gone, d) })
	})
}

func deleteFunc[T any](s []T, del func(T) bool) []T {
	out := s[:0]
	for _, v := range s {
		if !del(v) {
			out = append(out, v)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// UndoReport lists what Undo did and what it could not do.
type UndoReport struct {
	Removed  []string // files and folders deleted
	Problems []string // one line each: what was left in place and why
}

// Undo restores the tree a run changed: it deletes every copied file that
// is still byte-identical to what was written (a changed file is kept and
// reported), then every created folder that is empty, deepest first.
//
// database is the page database Undo was run against. The manifest is only
// a list of candidates: its root is not trusted, and a path is touched only
// when it lies strictly inside database, both as written and after
// resolving symbolic links, so a crafted manifest ("root": "/", "../x", a
// link to /etc) cannot delete anything else. The error is for an unreadable
// manifest or database; everything else is in the report.
func Undo(ctx context.Context, manifestPath, database string) (UndoReport, error) {
	var rep UndoReport
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		return rep, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return rep, fmt.Errorf("manifest %s is not valid JSON: %w", manifestPath, err)
	}
	if !filepath.IsAbs(m.Root) {
		return rep, fmt.Errorf("manifest %s has no absolute root", manifestPath)
	}
	db, err := filepath.Abs(database)
	if err != nil {
		return rep, fmt.Errorf("undo: database folder: %w", err)
	}
	realDB, err := filepath.EvalSymlinks(db)
	if err != nil {
		return rep, fmt.Errorf("undo: database folder %s: %w; %w", db, err, ErrUndoDatabase)
	}
	local := func(rel string) (string, bool) {
		full := filepath.Join(m.Root, filepath.FromSlash(rel))
		inside := filepath.IsLocal(filepath.FromSlash(rel)) && strictlyInside(db, full)
		if _, err := os.Lstat(full); inside && errors.Is(err, fs.ErrNotExist) {
			return "", false // already gone (an undo that ran before): nothing to do
		}
		if !inside || !resolvesInside(realDB, full) {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: not inside the database %s; left alone", rel, db))
			return "", false
		}
		return full, true
	}
	for i := len(m.Files) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		f := m.Files[i]
		full, ok := local(f.Path)
		if !ok {
			continue
		}
		sum, err := fileSHA256(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // already gone: nothing to restore
		case err != nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v; left in place", f.Path, err))
		case sum != f.SHA256:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: changed since it was copied; left in place", f.Path))
		default:
			if err := os.Remove(full); err != nil {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", f.Path, err))
			} else {
				rep.Removed = append(rep.Removed, f.Path)
			}
		}
	}
	for i := len(m.Dirs) - 1; i >= 0; i-- {
		d := m.Dirs[i]
		full, ok := local(d)
		if !ok {
			continue
		}
		fi, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !fi.IsDir() {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: no longer a folder; left alone", d))
			continue
		}
		if err := os.Remove(full); err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: not empty (files were added after the run); left in place", d))
		} else {
			rep.Removed = append(rep.Removed, d)
		}
	}
	return rep, nil
}

// strictlyInside reports whether p is below dir (never dir itself).
func strictlyInside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// resolvesInside reports whether p, with the symbolic links of its parent
// folders resolved, is still strictly inside realDir (itself resolved). The
// last component is not followed: Undo removes a link, never its target.
// A parent that no longer exists cannot hold anything to remove, so it
// counts as outside.
func resolvesInside(realDir, p string) bool {
	parent, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return false
	}
	return strictlyInside(realDir, filepath.Join(parent, filepath.Base(p)))
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
