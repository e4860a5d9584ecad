package optimize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Limits on a proposed folder.
const (
	maxNameBytes = 255 // longest file name on ext4, APFS, NTFS (in UTF-16 units, fewer bytes)
	maxDepth     = 8   // components below the scope
)

// SafeFolder validates a proposed folder and returns it cleaned, as a
// slash-separated path relative to the scope directory scopeDir.
//
// It rejects: an empty path, control characters, absolute paths ("/etc",
// `C:\x`, `\\server\share`), any ".." component, Windows reserved device
// names (CON, PRN, AUX, NUL, COM1–COM9, LPT1–LPT9, with or without an
// extension), components longer than 255 bytes, more than 8 levels, and any
// existing component that is a symbolic link or not a directory — so the
// result always resolves inside the scope.
//
// It sanitises what is merely unportable: `\` becomes "/", "." components
// and empty components are dropped, the characters < > : " | ? * become
// "_" (| is also the alias separator of the Reference Document column),
// leading spaces and trailing dots and spaces are trimmed (Windows drops
// them), and names are NFC-normalised.
func SafeFolder(scopeDir, proposed string) (string, error) {
	p := strings.TrimSpace(proposed)
	if p == "" {
		return "", errors.New("empty folder")
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return "", fmt.Errorf("folder %q contains a control character", proposed)
		}
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || hasDrive(p) {
		return "", fmt.Errorf("folder %q is absolute; it must be relative to the scope", proposed)
	}
	var parts []string
	for c := range strings.SplitSeq(p, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("folder %q leaves the scope (..)", proposed)
		}
		name, err := sanitizeName(c)
		if err != nil {
			return "", fmt.Errorf("folder %q: %w", proposed, err)
		}
		parts = append(parts, name)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("folder %q names the scope itself; propose a sub-folder", proposed)
	}
	if len(parts) > maxDepth {
		return "", fmt.Errorf("folder %q is %d levels deep (at most %d)", proposed, len(parts), maxDepth)
	}
	// Existing components must be real directories, never links that could
	// point outside the scope.
	cur := scopeDir
	for _, c := range parts {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("folder %q: %w", proposed, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("folder %q goes through a symbolic link (%s)", proposed, c)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("folder %q: %s is a file, not a folder", proposed, c)
		}
	}
	return strings.Join(parts, "/"), nil
}

// hasDrive reports a Windows drive prefix such as "C:".
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z'
}

// sanitizeName makes one path component portable or says why it cannot be.
func sanitizeName(c string) (string, error) {
	c = norm.NFC.String(c)
	c = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`<>:"|?*`, r) {
			return '_'
		}
		return r
	}, c)
	c = strings.TrimLeft(c, " ")
	c = strings.TrimRight(c, ". ")
	if c == "" {
		return "", errors.New("a folder name is only dots or spaces")
	}
	if isReserved(c) {
		return "", fmt.Errorf("%q is a reserved device name on Windows", c)
	}
	if len(c) > maxNameBytes {
		return "", fmt.Errorf("a folder name is %d bytes long (at most %d)", len(c), maxNameBytes)
	}
	return c, nil
}

// isReserved reports Windows device names, which cannot be folders even
// with an extension ("nul.txt").
func isReserved(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		return base[3] >= '0' && base[3] <= '9'
	}
	// COM¹, LPT² ... (superscript digits) are reserved as well.
	for _, p := range []string{"COM", "LPT"} {
		if rest, ok := strings.CutPrefix(base, p); ok && (rest == "¹" || rest == "²" || rest == "³") {
			return true
		}
	}
	return false
}
