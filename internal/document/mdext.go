package document

import (
	"regexp"
	"strings"
)

// MarkdownExtensions rewrites two Markdown extensions that documentation
// sites (MkDocs, Jekyll, Hugo) use and that plain Markdown would show as
// text:
//
//   - YAML front matter (a block between two --- lines at the very top):
//     its title becomes the document's top heading when the text has no
//     heading before its first paragraph, its description a paragraph;
//     other keys (cover images, tags, layout) are site settings, not
//     content, and go;
//   - admonitions (`!!! warning "タイトル"`, `??? note`, `???+ tip`)
//     followed by an indented body: the marker line becomes the title in
//     bold (nothing when it has no title) and the body is unindented, so
//     that it reads as the paragraph it is.
//
// Everything else passes unchanged.
func MarkdownExtensions(text string) string {
	text = frontMatter(text)
	if !strings.Contains(text, "!!!") && !strings.Contains(text, "???") {
		return text
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	fenced := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
		}
		m := admonitionRe.FindStringSubmatch(line)
		if fenced || m == nil {
			out = append(out, line)
			continue
		}
		if title := strings.TrimSpace(m[2]); title != "" {
			out = append(out, "**"+title+"**", "")
		}
		// The body: the indented lines (and blank lines between them)
		// that follow.
		for i+1 < len(lines) {
			next := lines[i+1]
			if strings.TrimSpace(next) == "" {
				if i+2 < len(lines) && isIndented(lines[i+2]) {
					out = append(out, "")
					i++
					continue
				}
				break
			}
			if !isIndented(next) {
				break
			}
			out = append(out, dedent(next))
			i++
		}
	}
	return strings.Join(out, "\n")
}

// admonitionRe matches an admonition's marker line: its kind and its
// optional quoted title.
var admonitionRe = regexp.MustCompile(`^(?:!!!|\?\?\?\+?)\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)*)\s*(?:"([^"]*)")?\s*$`)

func isIndented(line string) bool {
	return strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
}

// dedent removes one level of indentation (four spaces or a tab), and
// the extra spaces of a body indented by five.
func dedent(line string) string {
	if strings.HasPrefix(line, "\t") {
		return line[1:]
	}
	return strings.TrimLeft(line[4:], " ")
}

// frontMatterKeyRe matches a top-level `key: value` line of YAML.
var frontMatterKeyRe = regexp.MustCompile(`^([A-Za-z_][\w-]*):\s*(.*)$`)

// frontMatter rewrites the YAML front matter at the top of text (see
// MarkdownExtensions); text without one comes back unchanged.
func frontMatter(text string) string {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		rest, ok = strings.CutPrefix(text, "---\r\n")
	}
	if !ok {
		return text
	}
	end := -1
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		if i > 100 {
			break
		}
		if strings.TrimRight(l, "\r ") == "---" {
			end = i
			break
		}
	}
	if end < 1 {
		return text
	}
	var title, description string
	for _, l := range lines[:end] {
		m := frontMatterKeyRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "#") {
				return text // not YAML: a thematic break that opens the text
			}
			continue
		}
		v := strings.Trim(strings.TrimSpace(m[2]), `"'`)
		switch strings.ToLower(m[1]) {
		case "title":
			title = v
		case "description", "summary":
			description = v
		}
	}
	body := strings.TrimLeft(strings.Join(lines[end+1:], "\n"), "\r\n")
	var b strings.Builder
	if title != "" && !startsWithHeading(body) {
		b.WriteString("# " + title + "\n\n")
	}
	if description != "" {
		b.WriteString(description + "\n\n")
	}
	b.WriteString(body)
	return b.String()
}

// startsWithHeading reports whether the first non-blank line of text is an
// ATX heading.
func startsWithHeading(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return strings.HasPrefix(t, "#")
		}
	}
	return false
}
