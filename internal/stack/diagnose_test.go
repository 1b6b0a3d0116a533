package stack

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// kubectl's --request-timeout reaches diagnose's clients as the config's
// Timeout; only its absence (0) gives diagnose's own bound.
func TestDiagnoseKeepsTheRequestTimeoutGiven(t *testing.T) {
	for _, tc := range []struct{ given, want time.Duration }{
		{0, DefaultRequestTimeout},
		{3 * time.Second, 3 * time.Second},
		{2 * time.Minute, 2 * time.Minute},
	} {
		in := &rest.Config{Host: "https://127.0.0.1:6443", Timeout: tc.given}
		_, cfg, _, err := diagnoseClients(in, "test")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Timeout != tc.want || in.Timeout != tc.given {
			t.Errorf("--request-timeout %s: clients use %s (want %s), the caller's config now says %s", tc.given, cfg.Timeout, tc.want, in.Timeout)
		}
	}
}
