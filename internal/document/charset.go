package document

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/transform"
)

// ErrUnknownCharset is returned (wrapped) when an HTML file's encoding cannot
// be determined or its bytes do not decode.
var ErrUnknownCharset = errors.New("cannot determine the character encoding")

// metaScanLimit is how much of a document is searched for <meta charset>.
// The HTML standard says 1024 bytes; old pages put long comments and styles
// first, so a little more is searched.
const metaScanLimit = 4096

// japaneseCandidates are the encodings sniffed when no trustworthy
// declaration exists, in order of preference on a tie.
var japaneseCandidates = []struct {
	name string
	enc  encoding.Encoding
}{
	{"shift_jis", japanese.ShiftJIS},
	{"euc-jp", japanese.EUCJP},
	{"iso-2022-jp", japanese.ISO2022JP},
}

// DetectCharset returns the encoding of an HTML document as a WHATWG name
// ("utf-8", "shift_jis", "euc-jp", "iso-2022-jp", "utf-16le", "windows-1252"…).
//
// The order is: a byte order mark; then a <meta charset> or http-equiv
// declaration, trusted only if the bytes decode cleanly under it; then
// content sniffing among UTF-8, Shift_JIS, EUC-JP and ISO-2022-JP, which
// picks the clean decoding that looks most like Japanese text. A document
// that fits none of these is an ErrUnknownCharset error.
func DetectCharset(src []byte) (string, error) {
	name, _, err := detect(src)
	return name, err
}

// detect is DetectCharset that also returns the decoded text when deciding
// needed it, so that DecodeHTML need not decode twice ("" otherwise).
func detect(src []byte) (string, string, error) {
	switch {
	case bytes.HasPrefix(src, []byte("\xef\xbb\xbf")):
		return "utf-8", "", nil
	case bytes.HasPrefix(src, []byte("\xff\xfe")):
		return "utf-16le", "", nil
	case bytes.HasPrefix(src, []byte("\xfe\xff")):
		return "utf-16be", "", nil
	}

	label := metaCharset(src)
	var declared encoding.Encoding
	var declName string
	if label != "" {
		declared, declName = charset.Lookup(label)
		if strings.HasPrefix(declName, "utf-16") {
			// A byte-oriented meta tag cannot be UTF-16; the standard
			// says to read it as UTF-8.
			declared, declName = charset.Lookup("utf-8")
		}
	}

	if !hasHighBytes(src) && !isoEscape.Match(src) {
		if declared != nil {
			return declName, "", nil
		}
		return "utf-8", "", nil
	}

	sniffName, sniffText, sniffScore := sniffCharset(src)
	if declared != nil {
		if text, bad := decodeCount(declared, src); bad == 0 {
			switch {
			case declName == "utf-8" || declName == sniffName:
				return declName, text, nil
			case isJapanese(declName) && sniffName != "":
				// Both Japanese and both clean: trust the declaration.
				return declName, text, nil
			case sniffName == "" || sniffScore < 0.5:
				return declName, text, nil
			}
			// A legacy single-byte declaration over bytes that read
			// cleanly as Japanese: the declaration is wrong.
		}
	}
	if sniffName != "" {
		return sniffName, sniffText, nil
	}
	if label != "" {
		return "", "", fmt.Errorf("%w (declared %q, but the bytes do not decode as it or as UTF-8, Shift_JIS or EUC-JP) — save the file as UTF-8", ErrUnknownCharset, label)
	}
	return "", "", fmt.Errorf("%w (not UTF-8, Shift_JIS, EUC-JP or ISO-2022-JP) — save the file as UTF-8", ErrUnknownCharset)
}

// DecodeHTML converts an HTML document to UTF-8 using DetectCharset and
// returns the text and the encoding name. A UTF-8 byte order mark is removed.
func DecodeHTML(src []byte) (string, string, error) {
	name, text, err := detect(src)
	if err != nil {
		return "", "", err
	}
	if text != "" {
		return strings.TrimPrefix(strings.ToValidUTF8(text, "\uFFFD"), "\uFEFF"), name, nil
	}
	if name == "utf-8" {
		src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
		if utf8.Valid(src) {
			return string(src), name, nil
		}
		// A declared UTF-8 document with stray bytes: keep what is readable.
		return strings.ToValidUTF8(string(src), "\uFFFD"), name, nil
	}
	enc, _ := charset.Lookup(name)
	if enc == nil {
		return "", "", fmt.Errorf("%w (%q is not supported) — save the file as UTF-8", ErrUnknownCharset, name)
	}
	out, err := decodeAll(enc, src)
	if err != nil {
		return "", "", fmt.Errorf("%w (decoding as %s: %v) — save the file as UTF-8", ErrUnknownCharset, name, err)
	}
	return strings.TrimPrefix(strings.ToValidUTF8(out, "\uFFFD"), "\uFEFF"), name, nil
}

// metaCharset returns the charset label declared by a <meta charset> or
// <meta http-equiv="Content-Type" content="…; charset=…"> in the start of
// the document, or "".
func metaCharset(src []byte) string {
	if len(src) > metaScanLimit {
		src = src[:metaScanLimit]
	}
	z := html.NewTokenizer(bytes.NewReader(src))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) == "body" {
				return ""
			}
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var cs, content string
			var httpEquiv bool
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch strings.ToLower(string(k)) {
				case "charset":
					cs = strings.TrimSpace(string(v))
				case "content":
					content = string(v)
				case "http-equiv":
					httpEquiv = strings.EqualFold(strings.TrimSpace(string(v)), "content-type")
				}
			}
			if cs != "" {
				return cs
			}
			if httpEquiv {
				if l := charsetFromContentType(content); l != "" {
					return l
				}
			}
		}
	}
}

// charsetFromContentType extracts the charset parameter of a Content-Type
// value such as "text/html; charset=Shift_JIS".
func charsetFromContentType(s string) string {
	i := strings.Index(strings.ToLower(s), "charset")
	if i < 0 {
		return ""
	}
	s = strings.TrimLeft(s[i+len("charset"):], " \t")
	if !strings.HasPrefix(s, "=") {
		return ""
	}
	s = strings.Trim(strings.TrimLeft(s[1:], " \t"), `"'`)
	if j := strings.IndexAny(s, `;"' `); j >= 0 {
		s = s[:j]
	}
	return s
}

// sniffCharset guesses the encoding of bytes that carry no trustworthy
// declaration. It returns "" when nothing decodes cleanly, and the share of
// Japanese characters among the non-ASCII ones of the chosen decoding.
func sniffCharset(src []byte) (name, text string, score float64) {
	if !hasHighBytes(src) && isoEscape.Match(src) {
		if out, bad := decodeCount(japanese.ISO2022JP, src); bad == 0 {
			return "iso-2022-jp", out, japaneseShare(out)
		}
	}
	if utf8.Valid(src) {
		return "utf-8", "", japaneseShare(string(src))
	}
	best, bestText, bestScore := "", "", -1.0
	for _, c := range japaneseCandidates {
		if c.name == "iso-2022-jp" && !bytes.Contains(src, []byte{0x1b}) {
			continue
		}
		out, bad := decodeCount(c.enc, src)
		n := utf8.RuneCountInString(out)
		if bad > n/1000 { // tolerate the odd broken byte, not garbage
			continue
		}
		score := japaneseShare(out) - float64(bad)/float64(max(n, 1))
		if score > bestScore {
			best, bestText, bestScore = c.name, out, score
		}
	}
	if best == "" || bestScore <= 0 {
		return "", "", 0
	}
	return best, bestText, bestScore
}

// isoEscape matches the escape sequences that switch ISO-2022-JP into
// JIS X 0208 (ESC $ @, ESC $ B) or JIS X 0201 (ESC ( J, ESC ( I).
var isoEscape = regexp.MustCompile(`\x1b(\$[@B]|\([JI])`)

// decodeCount decodes src and counts undecodable sequences (replacement
// characters the decoder had to insert).
func decodeCount(enc encoding.Encoding, src []byte) (string, int) {
	s, err := decodeAll(enc, src)
	if err != nil {
		return "", len(src) + 1
	}
	bad := strings.Count(s, "\uFFFD") - bytes.Count(src, []byte("\xef\xbf\xbd"))
	if !utf8.ValidString(s) {
		bad++
	}
	return s, max(bad, 0)
}

// decodeAll decodes src with enc into a buffer sized up front; it is much
// faster than Decoder.Bytes on large pages, which grows its buffer in steps.
func decodeAll(enc encoding.Encoding, src []byte) (string, error) {
	var b strings.Builder
	b.Grow(len(src) * 3 / 2)
	_, err := io.Copy(&b, transform.NewReader(bytes.NewReader(src), enc.NewDecoder()))
	return b.String(), err
}

// japaneseShare is the share of non-ASCII runes in s that are kana, kanji
// or full-width punctuation: high for correctly decoded Japanese, low for
// mojibake (half-width katakana, Latin-1 symbols, rare ideographs).
func japaneseShare(s string) float64 {
	var nonASCII, jp int
	for _, r := range s {
		if r < 0x80 {
			continue
		}
		nonASCII++
		switch {
		case r >= 0x3000 && r <= 0x30ff, // punctuation, hiragana, katakana
			r >= 0xff01 && r <= 0xff5e, // full-width ASCII
			unicode.Is(unicode.Han, r) && r <= 0x9fff:
			jp++
		}
	}
	if nonASCII == 0 {
		return 0
	}
	return float64(jp) / float64(nonASCII)
}

func isJapanese(name string) bool {
	return name == "shift_jis" || name == "euc-jp" || name == "iso-2022-jp"
}

func hasHighBytes(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}
