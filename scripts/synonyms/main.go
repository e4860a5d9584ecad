// Command synonyms writes internal/synonym/synonyms.tsv and its index
// synonyms.index.tsv from Sudachi's synonym dictionary as the npm package
// sudachi-synonyms-dictionary ships it (sudachi-synonyms-dictionary.json):
//
//	npm pack sudachi-synonyms-dictionary@18.0.0 && tar xzf sudachi-synonyms-dictionary-18.0.0.tgz
//	go run ./scripts/synonyms package/sudachi-synonyms-dictionary.json internal/synonym
//
// Each group becomes one line: its number, then its words. Words Sudachi
// never expands (展開制御フラグ 2) and words without Japanese script are
// left out; a word that is expanded to but never expands (flag 1) gets a
// leading "!". Groups left with fewer than two words are dropped. The
// words are written normalised (synonym.Parse), and the index lists every
// word that expands, sorted, with the offsets of its groups' lines, so the
// program searches both files in place (synonym.Dictionary.Write).
//
// Given a .tsv instead of the .json, it rewrites that dictionary (groups
// in the synonyms.tsv format) the same way.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/shirube/shirube/internal/synonym"
)

type item struct {
	ExpandControl int    `json:"expandControl"`
	Midashi       string `json:"midashi"`
}

type group struct {
	ID    string `json:"id"`
	Items []item `json:"items"`
}

const header = "# Sudachi synonym dictionary (WorksApplications/SudachiDict, src/main/text/synonyms.txt), Apache License 2.0,\n" +
	"# from the npm package sudachi-synonyms-dictionary 18.0.0; see README.md. Written by scripts/synonyms: do not edit.\n"

func japanese(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー' {
			return true
		}
	}
	return false
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "synonyms:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: go run ./scripts/synonyms sudachi-synonyms-dictionary.json internal/synonym")
	}
	src, dir := os.Args[1], os.Args[2]
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(src, ".tsv") {
		if b, err = groupLines(b); err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
	}
	d, err := synonym.Parse(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	var groups, index bytes.Buffer
	groups.WriteString(header)
	index.WriteString(header)
	index.WriteString("# The words of synonyms.tsv that expand, sorted (bytes), each with the byte offsets of its groups' lines after synonyms.tsv's comments.\n")
	if err := d.Write(&groups, &index); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "synonyms.tsv"), groups.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "synonyms.index.tsv"), index.Bytes(), 0o644)
}

// groupLines is the package's JSON as group lines: one a line, its number,
// then its words.
func groupLines(b []byte) ([]byte, error) {
	var groups []group
	if err := json.Unmarshal(b, &groups); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	for _, g := range groups {
		var words []string
		for _, it := range g.Items {
			if it.ExpandControl == 2 || !japanese(it.Midashi) || strings.ContainsAny(it.Midashi, "\t\n") {
				continue
			}
			word := it.Midashi
			if it.ExpandControl == 1 {
				word = "!" + word
			}
			words = append(words, word)
		}
		if len(words) >= 2 {
			fmt.Fprintf(w, "%s\t%s\n", g.ID, strings.Join(words, "\t"))
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
