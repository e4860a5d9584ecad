package document

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFolderBytes is the longest folder name SanitizeFolder returns, in
// bytes. Most file systems allow 255 bytes per name; 100 leaves room for
// the rest of the path on Windows and keeps listings readable.
const MaxFolderBytes = 100

// SanitizeFolder turns name (a category or section title) into a folder
// name that is safe on every common file system:
//
//   - the characters / \ : * ? " < > | and control characters become "_";
//   - runs of white space (including the ideographic space) become one space;
//   - leading and trailing spaces and dots are removed, so the name is
//     never "." or ".." and Windows does not silently trim it;
//   - reserved Windows device names (CON, PRN, AUX, NUL, COM1–COM9,
//     LPT1–LPT9, with or without an extension, in any case) get a "_"
//     after the name part ("CON" → "CON_", "nul.txt" → "nul_.txt");
//   - the result is cut to MaxFolderBytes bytes on a rune boundary;
//   - an empty result becomes Uncategorized.
//
// Invalid UTF-8 is dropped. SanitizeFolder(SanitizeFolder(s)) ==
// SanitizeFolder(s) for every s.
func SanitizeFolder(name string) string {
	name = strings.ToValidUTF8(name, "")
	var b strings.Builder
	space := false
	for _, r := range name {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case strings.ContainsRune(`/\:*?"<>|`, r), unicode.IsControl(r), r == utf8.RuneError,
			unicode.Is(unicode.Cf, r): // zero-width and bidi controls hide in file names
			r = '_'
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	s := trimFolder(b.String())
	if isReservedWindowsName(s) {
		// "con.txt" → "con_.txt": Windows looks at the part before the first dot.
		if i := strings.IndexByte(s, '.'); i >= 0 {
			s = s[:i] + "_" + s[i:]
		} else {
			s += "_"
		}
	}
	if len(s) > MaxFolderBytes {
		cut := MaxFolderBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = trimFolder(s[:cut])
	}
	if s == "" {
		return Uncategorized
	}
	return s
}

// trimFolder removes the leading and trailing spaces and dots Windows does
// not keep in a name.
func trimFolder(s string) string { return strings.Trim(s, " .") }

// isReservedWindowsName reports whether s, or s without its extension, is
// a device name Windows does not allow as a file or folder name.
func isReservedWindowsName(s string) bool {
	base := strings.ToUpper(s)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		c := base[3]
		return c >= '1' && c <= '9'
	}
	// COM¹ and friends are reserved too.
	if (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) && len(base) > 3 {
		switch base[3:] {
		case "¹", "²", "³":
			return true
		}
	}
	return false
}
