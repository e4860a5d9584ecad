// Command synonyms writes internal/synonym/synonyms.tsv from Sudachi's
// synonym dictionary as the npm package sudachi-synonyms-dictionary ships
// it (sudachi-synonyms-dictionary.json):
//
//	npm pack sudachi-synonyms-dictionary@18.0.0 && tar xzf sudachi-synonyms-dictionary-18.0.0.tgz
//	go run ./scripts/synonyms package/sudachi-synonyms-dictionary.json > internal/synonym/synonyms.tsv
//
// Each group becomes one line: its number, then its words. Words Sudachi
// never expands (展開制御フラグ 2) and words without Japanese script are
// left out; a word that is expanded to but never expands (flag 1) gets a
// leading "!". Groups left with fewer than two words are dropped.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"
)

type item struct {
	ExpandControl int    `json:"expandControl"`
	Midashi       string `json:"midashi"`
}

type group struct {
	ID    string `json:"id"`
	Items []item `json:"items"`
}

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
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: go run ./scripts/synonyms sudachi-synonyms-dictionary.json > internal/synonym/synonyms.tsv")
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	var groups []group
	if err := json.Unmarshal(b, &groups); err != nil {
		return fmt.Errorf("%s: %w", os.Args[1], err)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, "# Sudachi synonym dictionary (WorksApplications/SudachiDict, src/main/text/synonyms.txt), Apache License 2.0,")
	fmt.Fprintln(w, "# from the npm package sudachi-synonyms-dictionary 18.0.0; see README.md. Written by scripts/synonyms.")
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
	return w.Flush()
}
