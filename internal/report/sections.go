package report

import (
	"fmt"
	"strings"
)

// Section is a part of report.md that a lab renders itself from its decided
// record (e.g. lab:kwok's fidelity table). Sections follow the claims, in
// order. Body is Markdown.
type Section struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	// Traffic, if set, is the picture of this section's facts, and
	// timeline.svg draws it in place of the pod lanes: a lab whose answer
	// is about a Service's traffic (lab:graceful) builds it from the same
	// facts as its claims and its table.
	Traffic *TrafficPicture `json:"-"`
}

// Traffic is the traffic picture a section of the run carries, if any.
func (r Run) Traffic() *TrafficPicture {
	for _, s := range r.Sections {
		if s.Traffic != nil {
			return s.Traffic
		}
	}
	return nil
}

func writeSections(b *strings.Builder, sections []Section) {
	for _, s := range sections {
		fmt.Fprintf(b, "## %s\n\n%s", s.Title, s.Body)
		if !strings.HasSuffix(s.Body, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}

// Table renders a Markdown table; cells are escaped (| and newlines), so a
// cell may hold any text, including `code`.
func Table(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(header)
	b.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		line(r)
	}
	return b.String()
}
