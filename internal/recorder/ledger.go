package recorder

import (
	"context"
	"fmt"
	"time"

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

// ledgerClockSamples is how many readings of the ledger's clock its offset
// is bounded from: each is a round trip through the API server's service
// proxy, and the tightest decides.
const ledgerClockSamples = 5

// ledgerClockTimeout bounds the whole probe: a ledger that does not answer
// in this time has its clock unknown, not the run stopped.
const ledgerClockTimeout = 10 * time.Second

// ProbeLedgerClock bounds the clock of the ledger served by the Service
// against the host's and keeps the offset in the record (ClockLedger). The
// ledger stamps every write with its own clock on the node it runs on,
// which a cluster reached through a kubeconfig may give no node pod to
// measure: the ledger is asked itself (ledger.TimePath), each answer taken
// between two host readings.
func (r *Recorder) ProbeLedgerClock(ctx context.Context, service, port string) (evidence.ClockOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, ledgerClockTimeout)
	defer cancel()
	probes, err := ledgerProbes(ctx, func(ctx context.Context) ([]byte, error) {
		return r.cfg.Client.CoreV1().Services(r.cfg.Namespace).ProxyGet("http", service, port, ledger.TimePath, nil).DoRaw(ctx)
	})
	if err != nil {
		return evidence.ClockOffset{}, fmt.Errorf("reading the clock of the ledger through service %s:%s: %w", service, port, err)
	}
	how := fmt.Sprintf("GET %s of the ledger through the API server's service proxy, between two host readings", ledger.TimePath)
	o, _ := evidence.OffsetFrom(evidence.ClockLedger(service), how, probes)
	r.mu.Lock()
	r.rec.Clocks = append(r.rec.Clocks, o)
	r.mu.Unlock()
	return o, nil
}

// ledgerProbes reads the ledger's clock ledgerClockSamples times with get,
// each reading between two host readings.
func ledgerProbes(ctx context.Context, get func(context.Context) ([]byte, error)) ([]evidence.ClockProbe, error) {
	var probes []evidence.ClockProbe
	for range ledgerClockSamples {
		before := now()
		body, err := get(ctx)
		after := now()
		if err != nil {
			return nil, err
		}
		remote, err := ledger.ParseTime(body)
		if err != nil {
			return nil, err
		}
		probes = append(probes, evidence.ClockProbe{Before: before, After: after, Remote: remote})
	}
	return probes, nil
}
