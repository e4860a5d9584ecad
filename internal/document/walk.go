package document

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrNotAFolder means the data folder given is a file (or something else
// that is not a folder); front ends say how to pass a folder.
var ErrNotAFolder = errors.New("データフォルダがフォルダではありません")

// DefaultMaxFileSize is the size above which Walk skips a file (100 MB).
const DefaultMaxFileSize int64 = 100 << 20

// Errors Walk returns for an unusable data folder. Test for them with
// errors.Is; the error text itself names the folder and the fix.
var (
	ErrDataDirMissing = errors.New("data folder not found")
	ErrDataDirEmpty   = errors.New("data folder has no supported files")
)

// dataDirError is the user-facing form of ErrDataDirMissing and
// ErrDataDirEmpty.
type dataDirError struct {
	dir   string
	cause error // ErrDataDirMissing or ErrDataDirEmpty
}

func (e *dataDirError) Error() string {
	if e.cause == ErrDataDirEmpty {
		return fmt.Sprintf("データフォルダが空です: %s — データを追加してください (.pdf .md .html .txt)", e.dir)
	}
	return fmt.Sprintf("データフォルダが見つかりません: %s — create it or choose another data folder", e.dir)
}

func (e *dataDirError) Unwrap() error { return e.cause }

// WalkOptions tune Walk. The zero value is ready to use.
type WalkOptions struct {
	// MaxFileSize is the largest file Walk accepts, in bytes; larger files
	// become Skips. Zero or negative means DefaultMaxFileSize.
	MaxFileSize int64

	// Exclude lists folders Walk must not enter, for example the page
	// database when it lives inside the data folder. Paths are compared
	// after filepath.Abs, so relative and absolute spellings both work.
	Exclude []string
}

// File is one supported source file found by Walk.
type File struct {
	Path    string    // path on disk: the data folder joined with Rel
	Rel     string    // slash-separated path relative to the data folder, e.g. "runbooks/incident.md"
	Stem    string    // page-database folder name: the base name without extension, or name_ext when two files in one folder share a stem
	Kind    Kind      // format, from the extension
	Size    int64     // bytes
	ModTime time.Time // modification time
}

// KindOf reports the Kind for a file name from its extension, compared
// case-insensitively: .pdf, .md/.markdown, .html/.htm, .txt, and the
// images .png, .jpg/.jpeg and .tif/.tiff.
func KindOf(name string) (Kind, bool) {
	switch strings.ToLower(path.Ext(filepath.ToSlash(name))) {
	case ".pdf":
		return PDF, true
	case ".md", ".markdown":
		return Markdown, true
	case ".html", ".htm":
		return HTML, true
	case ".txt":
		return Text, true
	case ".png", ".jpg", ".jpeg", ".tif", ".tiff":
		return Image, true
	}
	return "", false
}

// Walk finds every supported source file under dataDir and returns them
// sorted by Rel.
//
// Hidden entries (names starting with ".") and unsupported extensions are
// ignored silently. Symbolic links to files and folders inside the data
// folder are followed; a link that leads back into a folder already on the
// walk becomes a Skip instead of looping, and so does a link that leads out
// of the data folder (it could expose any file the process can read). The
// opt.Exclude folders (the page database, the index) are never entered,
// whether reached directly or through a link. Per-file problems — empty files, files over opt.MaxFileSize,
// permission errors, broken links, files that vanish during the walk — become
// Skips and the walk continues.
//
// Walk fails with ErrDataDirMissing when dataDir does not exist and with
// ErrDataDirEmpty when it holds no supported file at all. If supported files
// exist but every one was skipped, Walk returns no files, the Skips and a nil
// error, so that the caller can show why.
func Walk(ctx context.Context, dataDir string, opt WalkOptions) ([]File, []Skip, error) {
	return walker{opt: opt}.walk(ctx, dataDir)
}

// walker holds one walk's settings. afterList, when set, runs after each
// folder is listed and before its entries are examined; tests use it to
// make files vanish mid-walk.
type walker struct {
	opt       WalkOptions
	afterList func(dir string)
}

// walkState is the mutable state of one walk.
type walkState struct {
	root     string
	realRoot string // root with symbolic links resolved
	maxSize  int64
	exclude  []string          // Exclude, absolute
	realExcl []string          // Exclude with symbolic links resolved (existing ones)
	visited  map[fileID]string // folder identity -> Rel of its first visit
	files    []File
	skips    []Skip
	nSupport int // supported files seen, ingested or skipped
}

func (w walker) walk(ctx context.Context, dataDir string) ([]File, []Skip, error) {
	info, err := os.Stat(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, &dataDirError{dir: dataDir, cause: ErrDataDirMissing}
	case err != nil:
		return nil, nil, fmt.Errorf("データフォルダを開けません: %s: %w — check that it exists and is readable", dataDir, err)
	case !info.IsDir():
		return nil, nil, fmt.Errorf("%w: %s", ErrNotAFolder, dataDir)
	}
	st := &walkState{
		root:    dataDir,
		maxSize: w.opt.MaxFileSize,
		visited: map[fileID]string{},
	}
	if st.maxSize <= 0 {
		st.maxSize = DefaultMaxFileSize
	}
	for _, ex := range w.opt.Exclude {
		if abs, err := filepath.Abs(ex); err == nil {
			st.exclude = append(st.exclude, abs)
		}
		if real, err := filepath.EvalSymlinks(ex); err == nil {
			if abs, err := filepath.Abs(real); err == nil {
				st.realExcl = append(st.realExcl, abs)
			}
		}
	}
	if real, err := filepath.EvalSymlinks(dataDir); err == nil {
		st.realRoot, _ = filepath.Abs(real)
	}
	st.visited[idOf(info)] = "."
	if _, err := os.ReadDir(dataDir); err != nil {
		return nil, nil, fmt.Errorf("データフォルダを読めません: %s: %w — check its permissions", dataDir, err)
	}
	if err := w.dir(ctx, st, dataDir, "."); err != nil {
		return nil, nil, err
	}
	if st.nSupport == 0 {
		return nil, nil, &dataDirError{dir: dataDir, cause: ErrDataDirEmpty}
	}
	slices.SortFunc(st.files, func(a, b File) int { return strings.Compare(a.Rel, b.Rel) })
	slices.SortFunc(st.skips, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	return st.files, st.skips, nil
}

// dir walks one folder. disk is its path on disk, rel its slash path
// relative to the data folder ("." for the root).
func (w walker) dir(ctx context.Context, st *walkState, disk, rel string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("walking %s: %w", st.root, err)
	}
	entries, err := os.ReadDir(disk)
	if err != nil {
		st.skips = append(st.skips, Skip{Path: rel + "/", Reason: readReason("folder", err)})
		return nil
	}
	if w.afterList != nil {
		w.afterList(disk)
	}

	// Stems are decided over every supported name in the folder, skipped or
	// not, so that a file's identity does not change when a sibling with
	// the same stem becomes readable.
	var names []string
	for _, e := range entries {
		if _, ok := KindOf(e.Name()); ok && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	stems := stemsFor(names)

	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		childDisk := filepath.Join(disk, name)
		childRel := path.Join(rel, name)
		kind, supported := KindOf(name)

		info, err := os.Stat(childDisk) // follows symlinks
		if err != nil {
			// An unsupported name that vanished or dangles is not ours to
			// report; it could only matter if it were a folder.
			if !supported && (errors.Is(err, fs.ErrNotExist) || e.Type()&fs.ModeSymlink == 0 && !e.IsDir()) {
				continue
			}
			if supported {
				st.nSupport++
			}
			st.skips = append(st.skips, Skip{Path: childRel, Reason: statReason(e, err)})
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 && (supported || info.IsDir()) {
			if reason := w.linkReason(st, childDisk); reason != "" {
				if info.IsDir() {
					childRel += "/"
				} else {
					st.nSupport++
				}
				st.skips = append(st.skips, Skip{Path: childRel, Reason: reason})
				continue
			}
		}
		if info.IsDir() {
			if w.excluded(st, childDisk) {
				continue
			}
			id := idOf(info)
			if first, seen := st.visited[id]; seen {
				st.skips = append(st.skips, Skip{Path: childRel + "/", Reason: loopReason(first, childRel)})
				continue
			}
			st.visited[id] = childRel
			if err := w.dir(ctx, st, childDisk, childRel); err != nil {
				return err
			}
			continue
		}
		if !supported || !info.Mode().IsRegular() {
			continue
		}
		st.nSupport++
		if reason := w.checkFile(st, childDisk, info); reason != "" {
			st.skips = append(st.skips, Skip{Path: childRel, Reason: reason})
			continue
		}
		st.files = append(st.files, File{
			Path:    childDisk,
			Rel:     childRel,
			Stem:    stems[name],
			Kind:    kind,
			Size:    info.Size(),
			ModTime: info.ModTime(),
		})
	}
	return nil
}

func (w walker) excluded(st *walkState, disk string) bool {
	if len(st.exclude) == 0 {
		return false
	}
	abs, err := filepath.Abs(disk)
	if err != nil {
		return false
	}
	return slices.Contains(st.exclude, abs)
}

// linkReason returns why the symbolic link at disk must not be followed,
// or "": its target is outside the data folder, or inside the page
// database or the index (which would add a copy of every page on every
// run).
func (w walker) linkReason(st *walkState, disk string) string {
	real, err := filepath.EvalSymlinks(disk)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return readReason("link", err)
	}
	for _, ex := range st.realExcl {
		if within(ex, real) {
			return "symlink into the page database or index folder — never indexed (it would add a copy of every page); remove the link"
		}
	}
	if st.realRoot != "" && !within(st.realRoot, real) {
		return "symlink leads outside the data folder — not followed; copy or move the files into the data folder instead"
	}
	return ""
}

// within reports whether p is dir or below it; both are absolute and
// clean.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// checkFile returns why a regular supported file cannot be ingested, or "".
func (w walker) checkFile(st *walkState, disk string, info fs.FileInfo) string {
	switch {
	case info.Size() == 0:
		return "empty file (0 bytes) — nothing to ingest; add content or remove it"
	case info.Size() > st.maxSize:
		return fmt.Sprintf("file is %s, over the %s limit — split it or raise the maximum file size", humanSize(info.Size()), humanSize(st.maxSize))
	}
	f, err := os.Open(disk)
	if err != nil {
		return readReason("file", err)
	}
	f.Close()
	return ""
}

// stemsFor maps each supported file name in one folder to its stem. Names
// that share a stem get name_ext instead (a.md, a.html → a_md, a_html); if
// that still collides the full base name is used, which the file system
// guarantees to be unique.
func stemsFor(names []string) map[string]string {
	byStem := map[string][]string{}
	for _, n := range names {
		s := strings.TrimSuffix(n, path.Ext(n))
		byStem[s] = append(byStem[s], n)
	}
	out := make(map[string]string, len(names))
	for s, group := range byStem {
		if len(group) == 1 {
			out[group[0]] = s
			continue
		}
		for _, n := range group {
			out[n] = s + "_" + strings.ToLower(strings.TrimPrefix(path.Ext(n), "."))
		}
	}
	// Second pass: a rename may collide with another file's plain stem.
	count := map[string]int{}
	for _, s := range out {
		count[s]++
	}
	for n, s := range out {
		if count[s] > 1 {
			out[n] = n
		}
	}
	return out
}

func readReason(what string, err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("cannot read %s: permission denied — check its permissions", what)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s disappeared during the scan — run the ingest again", what)
	}
	return fmt.Sprintf("cannot read %s: %v", what, oneLine(err))
}

func statReason(e fs.DirEntry, err error) string {
	isLink := e.Type()&fs.ModeSymlink != 0
	switch {
	case errors.Is(err, syscall.ELOOP):
		return "symlink loop — the link points back to itself; fix or remove it"
	case isLink && errors.Is(err, fs.ErrNotExist):
		return "broken symlink — its target does not exist; fix or remove it"
	}
	return readReason("file", err)
}

func loopReason(first, rel string) string {
	if first == "." || strings.HasPrefix(rel, first+"/") {
		return fmt.Sprintf("symlink loop — this folder leads back to %q; not followed", first)
	}
	return fmt.Sprintf("same folder as %q (reached through a symlink) — already ingested there", first)
}

func humanSize(n int64) string {
	const mb = 1 << 20
	if n >= mb {
		return fmt.Sprintf("%.1f MB", float64(n)/mb)
	}
	return fmt.Sprintf("%d bytes", n)
}

// oneLine flattens an error message to a single line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
