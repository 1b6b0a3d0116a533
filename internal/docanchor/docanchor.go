// Package docanchor computes the anchors GitHub gives a Markdown file's
// headings, so a test can check that every "README.md#…" termlab prints
// still leads somewhere after the documents are rewritten.
package docanchor

import (
	"bufio"
	"strconv"
	"strings"
	"unicode"
)

// Anchors are the fragment ids of markdown's headings as GitHub makes them:
// the heading's text lowercased, Markdown emphasis and code marks dropped,
// punctuation other than '-' and '_' removed, spaces made '-'; a repeated
// anchor gets -1, -2, …. Headings inside fenced code blocks do not count.
func Anchors(markdown string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(markdown))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(trimmed) == f:
				fence = ""
			}
			continue
		}
		if fence != "" || len(line)-len(trimmed) > 3 {
			continue
		}
		text, ok := headingText(trimmed)
		if !ok {
			continue
		}
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// fenceOf is the ``` or ~~~ run that opens or closes a fenced block, or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// headingText is the text of an ATX heading ("## Install: `termlab`").
func headingText(line string) (string, bool) {
	level := len(line) - len(strings.TrimLeft(line, "#"))
	if level < 1 || level > 6 {
		return "", false
	}
	rest := line[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	// A closing run of #s is not part of the text.
	if t := strings.TrimRight(rest, "#"); t != rest && (t == "" || strings.HasSuffix(t, " ")) {
		rest = strings.TrimSpace(t)
	}
	return rest, true
}

// Slug is GitHub's anchor of one heading's text.
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
