package metrics

import (
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// NormalizePath makes page identities comparable: it trims space, turns
// `\` into `/`, removes leading "./", collapses repeated slashes and applies
// NFC (macOS writes Japanese file names decomposed). Case is kept.
func NormalizePath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	// Until nothing changes: stripping "./" can expose spaces (「./ a」)
	// and trimming them can expose another "./".
	for {
		q := trimSpace(p)
		for strings.Contains(q, "//") {
			q = strings.ReplaceAll(q, "//", "/")
		}
		for strings.HasPrefix(q, "./") {
			q = q[2:]
		}
		if q == p {
			break
		}
		p = q
	}
	return norm.NFC.String(p)
}

// ParseReference reads a Reference Document cell: one relevant page per
// line (blank lines are ignored), each line an alias group
// "a.md|b.md" of paths that hold the same content. Paths are normalised
// with NormalizePath.
//
// A line that lists pages separated by commas, 「、」 or semicolons
// ("a.md, b.md") is read as that many pages when every listed path has a
// file extension, as spreadsheets often write lists; otherwise the line is
// one path whose name contains a comma.
func ParseReference(cell string) [][]string {
	cell = strings.ReplaceAll(cell, "\r\n", "\n")
	var groups [][]string
	for line := range strings.SplitSeq(cell, "\n") {
		for _, item := range splitPageList(line) {
			var g []string
			for a := range strings.SplitSeq(item, "|") {
				if a = NormalizePath(a); a != "" {
					g = append(g, a)
				}
			}
			if len(g) > 0 {
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// splitPageList splits a reference line at list separators when every
// part is a path with a file extension (see ParseReference).
func splitPageList(line string) []string {
	parts := strings.FieldsFunc(line, func(r rune) bool {
		return r == ',' || r == '、' || r == '，' || r == ';' || r == '；'
	})
	if len(parts) < 2 {
		return []string{line}
	}
	for _, p := range parts {
		for a := range strings.SplitSeq(p, "|") {
			a = NormalizePath(a)
			if a == "" || path.Ext(a) == "" || strings.ContainsRune(path.Ext(a), ' ') {
				return []string{line}
			}
		}
	}
	return parts
}

// FormatReference is the inverse of ParseReference.
func FormatReference(groups [][]string) string {
	lines := make([]string, len(groups))
	for i, g := range groups {
		lines[i] = strings.Join(g, "|")
	}
	return strings.Join(lines, "\n")
}

// Reference is the reference verification of one row (seed 000).
type Reference struct {
	TP, TN, FP, FN int
	Recall         Ratio // TP/(TP+FN)
	Precision      Ratio // TP/(TP+FP)
	Specificity    Ratio // TN/(TN+FP)
	F1             Ratio // 2TP/(2TP+FP+FN)
	Accuracy       Ratio // (TP+TN)/total
}

// EvaluateReference compares the retrieved pages with the relevant alias
// groups over the whole database allPages.
//
// Each alias group is one relevant item: TP when any alias was retrieved,
// FN otherwise. FP counts distinct retrieved pages that are in no group.
// The universe is every page, with the pages of one group counted once
// (so an optimised copy does not inflate TN), plus any retrieved or relevant
// page missing from allPages; TN = universe − TP − FP − FN.
func EvaluateReference(relevant [][]string, retrieved, allPages []string) Reference {
	groupOf := map[string]int{}
	for i, g := range relevant {
		for _, a := range g {
			if _, ok := groupOf[a]; !ok {
				groupOf[a] = i
			}
		}
	}
	hit := make([]bool, len(relevant))
	var r Reference
	seen := map[string]bool{}
	for _, p := range retrieved {
		p = NormalizePath(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if i, ok := groupOf[p]; ok {
			hit[i] = true
		} else {
			r.FP++
		}
	}
	for _, h := range hit {
		if h {
			r.TP++
		} else {
			r.FN++
		}
	}
	// Universe: one entry per group plus every other page.
	others := map[string]bool{}
	for _, p := range allPages {
		if p = NormalizePath(p); p != "" {
			if _, ok := groupOf[p]; !ok {
				others[p] = true
			}
		}
	}
	for p := range seen {
		if _, ok := groupOf[p]; !ok {
			others[p] = true
		}
	}
	total := len(relevant) + len(others)
	r.TN = max(0, total-r.TP-r.FP-r.FN)
	r.Recall = Of(r.TP, r.TP+r.FN)
	r.Precision = Of(r.TP, r.TP+r.FP)
	r.Specificity = Of(r.TN, r.TN+r.FP)
	r.F1 = f1(r.TP, r.FP, r.FN)
	r.Accuracy = Of(r.TP+r.TN, total)
	return r
}
