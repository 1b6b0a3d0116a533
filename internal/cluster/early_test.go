package cluster

import "testing"

func TestPublishedEndpoint(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"127.0.0.1:41235"}, "127.0.0.1:41235"},
		{[]string{"[::1]:41235", "127.0.0.1:41235"}, "127.0.0.1:41235"},
		{[]string{"0.0.0.0:6443", "[::]:6443"}, "127.0.0.1:6443"},
	} {
		if got, err := publishedEndpoint(tc.lines); err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.lines, got, err, tc.want)
		}
	}
	for _, lines := range [][]string{nil, {"[::1]:41235"}, {"garbage"}} {
		if got, err := publishedEndpoint(lines); err == nil {
			t.Errorf("%q: got %q, want an error", lines, got)
		}
	}
}
