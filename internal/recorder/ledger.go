package recorder

import (
	"context"
	"fmt"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/ledger"
)

// ReadLedger reads the ledger served by the Service (port port) in the run's
// namespace through the API server's service proxy — no port-forward, no
// host network — saves it raw in the current step's folder and adds it to
// the record.
func (r *Recorder) ReadLedger(ctx context.Context, service, port string) (evidence.LedgerRead, error) {
	raw, err := r.cfg.Client.CoreV1().Services(r.cfg.Namespace).ProxyGet("http", service, port, "/", nil).DoRaw(ctx)
	at := now()
	if err != nil {
		return evidence.LedgerRead{}, fmt.Errorf("reading the ledger through service %s:%s: %w", service, port, err)
	}
	entries, err := ledger.Parse(raw)
	if err != nil {
		return evidence.LedgerRead{}, fmt.Errorf("parsing the ledger of service %s: %w", service, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	read := evidence.LedgerRead{Step: r.currentStepLocked(), At: at, Service: service + ":" + port, Entries: entries}
	read.Path = r.uniquePathLocked(r.stepDirLocked(), "ledger", ".jsonl")
	if err := r.writeFileLocked(read.Path, raw); err != nil {
		return evidence.LedgerRead{}, err
	}
	r.rec.Ledgers = append(r.rec.Ledgers, read)
	return read, nil
}

// PeekLedger reads the ledger without recording it: for a step that waits
// until the ledger shows something (reaching a state, not its history — the
// history is the ledger itself, read by ReadLedger).
func (r *Recorder) PeekLedger(ctx context.Context, service, port string) ([]ledger.Entry, error) {
	raw, err := r.cfg.Client.CoreV1().Services(r.cfg.Namespace).ProxyGet("http", service, port, "/", nil).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger through service %s:%s: %w", service, port, err)
	}
	return ledger.Parse(raw)
}
