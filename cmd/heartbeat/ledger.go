package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/ledger"
)

// The ledger (lab:statefulset): `heartbeat ledger` serves it; a heartbeat
// with LEDGER_URL set also posts its identity to it.
const (
	envLedgerListen = "LEDGER_LISTEN" // ledger mode: the address to serve on (default :8080)
	envLedgerURL    = "LEDGER_URL"    // writer: where to POST; unset, nothing is written
	envLedgerEvery  = "LEDGER_EVERY"  // writer: time between writes (default 500ms)
	// The writer's identity, from the downward API.
	envPodName = "POD_NAME"
	envPodUID  = "POD_UID"
	envNode    = "NODE_NAME"
)

// writerConfig is what a heartbeat that writes to the ledger needs.
type writerConfig struct {
	URL   string
	Every time.Duration
	Who   ledger.Write // Pod, UID, Node
}

// parseWriterConfig reads the writer's settings; ok is false when
// LEDGER_URL is unset (a plain heartbeat).
func parseWriterConfig(getenv func(string) string) (cfg writerConfig, ok bool, err error) {
	cfg = writerConfig{URL: getenv(envLedgerURL), Every: 500 * time.Millisecond}
	if cfg.URL == "" {
		return cfg, false, nil
	}
	if v := getenv(envLedgerEvery); v != "" {
		if cfg.Every, err = time.ParseDuration(v); err != nil {
			return cfg, false, fmt.Errorf("%s: %w", envLedgerEvery, err)
		}
	}
	if cfg.Every <= 0 {
		return cfg, false, errors.New(envLedgerEvery + " must be > 0")
	}
	cfg.Who = ledger.Write{Pod: getenv(envPodName), UID: getenv(envPodUID), Node: getenv(envNode)}
	if cfg.Who.Pod == "" || cfg.Who.UID == "" {
		return cfg, false, fmt.Errorf("%s and %s must be set to write to the ledger", envPodName, envPodUID)
	}
	return cfg, true, nil
}

// writeLedger posts the identity every cfg.Every until ctx ends. A write
// that fails is not retried: the gap in the sequence numbers shows it.
func writeLedger(ctx context.Context, cfg writerConfig, now func() time.Time) {
	// Shorter than the period, so a slow ledger cannot pile writes up.
	client := &http.Client{Timeout: cfg.Every * 4 / 5}
	tick := time.NewTicker(cfg.Every)
	defer tick.Stop()
	for seq := 1; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w := cfg.Who
		w.Seq, w.SentAt = seq, now().UTC()
		body, err := ledger.Body(w)
		if err != nil {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
		if err != nil {
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// serveLedger is `heartbeat ledger`: it serves the ledger until SIGTERM or
// SIGINT and returns the exit code.
func serveLedger(getenv func(string) string) int {
	addr := getenv(envLedgerListen)
	if addr == "" {
		addr = ":8080"
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: ledger.NewServer(nil), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Printf("ledger serving on %s\n", addr)
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "ledger:", err)
		return 1
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		fmt.Println("ledger: stopped")
		return 0
	}
}
