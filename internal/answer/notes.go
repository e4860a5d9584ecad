package answer

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
)

// Note markers tie a word or a table cell to a note elsewhere on the page:
// 「JVN（*1）」 and the footnote 「（*1）Japan Vulnerability Notes：…」, a
// cell 「○（注 2）」 and the note 「（注 2）…に限り、配合することができる。」.
// The marker is a numbered asterisk, ※ or 注, bracketed or not; the text is
// matched after analysis.Normalize (full-width brackets and digits folded).
var (
	// noteRefRe finds a marker in running text.
	noteRefRe = regexp.MustCompile(`\(\s*(\*|※|注)\s*(\d{1,2})\s*\)|(\*|※)\s*(\d{1,2})`)
	// noteLabelRe matches a marker that opens a line: the label of a note.
	noteLabelRe = regexp.MustCompile(`^\s*(?:\(\s*(\*|※|注)\s*(\d{1,2})\s*\)|(\*|※|注)\s*(\d{1,2})(?:[\s:：.．)]|$))\s*`)
	// daggerRe finds an unnumbered dagger marker (†, ‡, ††): a table cell
	// 「NodePort Services†」 and the note 「† … のデフォルトのポート範囲。」.
	daggerRe = regexp.MustCompile(`[†‡]+`)
	// noteTailRe matches a line that ends with a marker: the sentence goes
	// on in the next line (PDF text breaks after 「JVN（*1）」).
	noteTailRe = regexp.MustCompile(`[(（]\s*(?:[*＊※]|注)\s*[0-9０-９]{1,2}\s*[)）]$`)
)

// noteKey names a marker by its kind and number: "*1", "※2", "注2".
func noteKey(kind, num string) string { return kind + num }

// noteRef is a note marker in a sentence: the note's key and the word the
// marker is attached to (「JVN（*1）」 → "jvn"), normalised.
type noteRef struct {
	key, word string
}

// noteRefs returns the note markers of a sentence, in order. A marker that
// opens the sentence is the label of a note, not a reference to one.
func noteRefs(text string) []noteRef {
	n := analysis.Normalize(text)
	if loc := noteLabelRe.FindStringIndex(n); loc != nil {
		n = n[loc[1]:]
	}
	var out []noteRef
	for _, m := range noteRefRe.FindAllStringSubmatchIndex(n, -1) {
		var k string
		if m[2] >= 0 {
			k = noteKey(n[m[2]:m[3]], n[m[4]:m[5]])
		} else {
			k = noteKey(n[m[6]:m[7]], n[m[8]:m[9]])
		}
		out = append(out, noteRef{key: k, word: wordBefore(n[:m[0]])})
	}
	for _, m := range daggerRe.FindAllStringIndex(n, -1) {
		if m[0] > 0 {
			out = append(out, noteRef{key: n[m[0]:m[1]], word: wordBefore(n[:m[0]])})
		}
	}
	return out
}

// wordBefore returns the word that ends text: its last run of letters and
// digits of one script (Latin, or kanji and katakana).
func wordBefore(text string) string {
	text = strings.TrimRight(text, " ")
	end := len(text)
	start := end
	latin := false
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:start])
		isLatin := r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
		isKanji := unicode.Is(unicode.Han, r) || unicode.Is(unicode.Katakana, r) || r == 'ー'
		if start == end {
			latin = isLatin
		}
		if latin && !isLatin || !latin && !isKanji {
			break
		}
		start -= size
	}
	return text[start:end]
}

// noteLabel returns the key of the note a line opens and the line's text
// after the label ("" when the label stands alone), or ok false when the
// line opens no note.
func noteLabel(line string) (key, rest string, ok bool) {
	n := analysis.Normalize(line)
	m := noteLabelRe.FindStringSubmatchIndex(n)
	if m == nil {
		t := strings.TrimLeft(n, " ")
		if d := daggerRe.FindStringIndex(t); d != nil && d[0] == 0 {
			return t[:d[1]], strings.TrimSpace(t[d[1]:]), true
		}
		return "", "", false
	}
	if m[2] >= 0 {
		key = noteKey(n[m[2]:m[3]], n[m[4]:m[5]])
	} else {
		key = noteKey(n[m[6]:m[7]], n[m[8]:m[9]])
	}
	return key, strings.TrimSpace(n[m[1]:]), true
}

// isNoteLabel reports whether a line opens with a note's label.
func isNoteLabel(line string) bool {
	_, _, ok := noteLabel(line)
	return ok
}

// lineNotes returns, for each line of lineSentences(text), the key of the
// note the line belongs to, or "": a line that opens with a note label, and
// the line after a label that stands alone (the note's text). labelOnly
// marks the lines that are nothing but a label.
func lineNotes(text string) (keys []string, labelOnly []bool) {
	pending := ""
	for _, line := range candidateLineInfo(text) {
		if !line.code && len(analysis.Sentences(line.text)) == 0 {
			continue // lineSentences drops it too
		}
		key, rest, ok := noteLabel(line.text)
		switch {
		case ok && rest == "":
			keys = append(keys, key)
			labelOnly = append(labelOnly, true)
			pending = key
			continue
		case ok:
			keys = append(keys, key)
		default:
			keys = append(keys, pending)
		}
		labelOnly = append(labelOnly, false)
		pending = ""
	}
	return keys, labelOnly
}
