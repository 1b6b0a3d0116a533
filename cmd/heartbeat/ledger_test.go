package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/ledger"
)

func TestParseWriterConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	who := []string{envPodName, "ident-0", envPodUID, "u1", envNode, "n2"}
	tests := []struct {
		name      string
		getenv    func(string) string
		wantOK    bool
		wantErr   bool
		wantEvery time.Duration
	}{
		{"no ledger: a plain heartbeat", env(envPodName, "ident-0"), false, false, 500 * time.Millisecond},
		{"defaults", env(append(who, envLedgerURL, "http://10.96.0.9:8080/")...), true, false, 500 * time.Millisecond},
		{"every", env(append(who, envLedgerURL, "http://l/", envLedgerEvery, "250ms")...), true, false, 250 * time.Millisecond},
		{"bad every", env(append(who, envLedgerURL, "http://l/", envLedgerEvery, "often")...), false, true, 0},
		{"zero every", env(append(who, envLedgerURL, "http://l/", envLedgerEvery, "0s")...), false, true, 0},
		{"no identity", env(envLedgerURL, "http://l/"), false, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok, err := parseWriterConfig(tc.getenv)
			if (err != nil) != tc.wantErr || ok != tc.wantOK {
				t.Fatalf("ok=%v err=%v, want ok=%v err=%v", ok, err, tc.wantOK, tc.wantErr)
			}
			if ok && (cfg.Every != tc.wantEvery || cfg.Who != (ledger.Write{Pod: "ident-0", UID: "u1", Node: "n2"})) {
				t.Errorf("got %+v", cfg)
			}
		})
	}
}

func TestWriterPostsItsIdentityWithRisingSequence(t *testing.T) {
	srv := ledger.NewServer(nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	who := ledger.Write{Pod: "ident-0", UID: "u1", Node: "n2"}
	done := make(chan struct{})
	go func() {
		writeLedger(ctx, writerConfig{URL: ts.URL, Every: 20 * time.Millisecond, Who: who}, time.Now)
		close(done)
	}()
	var entries []ledger.Entry
	for len(entries) < 3 {
		select {
		case <-ctx.Done():
			t.Fatalf("only %d writes arrived", len(entries))
		case <-time.After(20 * time.Millisecond):
		}
		rr := httptest.NewRecorder()
		srv.ServeHTTP(rr, httptest.NewRequest("GET", "/", nil))
		var err error
		if entries, err = ledger.Parse(rr.Body.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	for i, e := range entries[:3] {
		if e.Pod != who.Pod || e.UID != who.UID || e.Node != who.Node || e.Seq != i+1 || e.SentAt.IsZero() {
			t.Errorf("write %d: %+v", i, e)
		}
	}
}
