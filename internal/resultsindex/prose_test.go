package resultsindex

import "testing"

func TestAnIndexRowTakesTheAnswersProse(t *testing.T) {
	for in, want := range map[string]string{
		"The pod stayed.": "The pod stayed.",
		"Nodes dropped it by 1.7 s.\n\n| a | b |\n|---|---|": "Nodes dropped it by 1.7 s. (the table is in the report)",
		"| a | b |\n|---|---|":                               "a table, in the report",
	} {
		if got := proseOf(in); got != want {
			t.Errorf("proseOf(%q) = %q, want %q", in, got, want)
		}
	}
}
