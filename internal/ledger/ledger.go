// Package ledger is the wire format and the server of lab:statefulset's
// ledger: a tiny append-only log in the cluster to which every writer posts
// its identity (pod name, pod UID, node, sequence number) twice a second.
// The ledger stamps each write with its own clock when it arrives, so the
// writes of two processes can be put in one order and their overlap measured
// on a single clock. The workload (cmd/heartbeat) serves and writes it; the
// lab reads it back and the claims decide from it.
package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Write is what a writer posts: who it is and when it sent this.
type Write struct {
	Pod    string    `json:"pod"`
	UID    string    `json:"uid"`
	Node   string    `json:"node"`
	Seq    int       `json:"seq"`
	SentAt time.Time `json:"sent_at"`
}

// Entry is a write as the ledger keeps it: stamped on arrival with the
// ledger's own clock.
type Entry struct {
	ReceivedAt time.Time `json:"received_at"`
	Write
}

// maxWrite bounds one POST body: a write is about 200 bytes.
const maxWrite = 4 << 10

// TimePath answers a GET with the ledger's clock (TimeBody): the recorder
// reads it between two host readings, so the writes' stamps can be put on
// the host's clock where the ledger's node is a machine of its own (a
// cluster reached through a kubeconfig).
const TimePath = "/time"

// Server keeps every write in arrival order.
type Server struct {
	now     func() time.Time
	mu      sync.Mutex
	entries []Entry
}

// NewServer returns an empty ledger; now is its clock (time.Now if nil).
func NewServer(now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	return &Server{now: now}
}

// ServeHTTP appends a POSTed write (204) and answers a GET with every entry,
// one JSON object a line, in arrival order; a GET of TimePath with the
// ledger's clock.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == TimePath {
		at := s.now()
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, TimeBody(at))
		return
	}
	switch r.Method {
	case http.MethodPost:
		at := s.now().UTC()
		var wr Write
		if err := json.NewDecoder(io.LimitReader(r.Body, maxWrite)).Decode(&wr); err != nil {
			http.Error(w, "decoding the write: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.entries = append(s.entries, Entry{ReceivedAt: at, Write: wr})
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		s.mu.Lock()
		entries := append([]Entry(nil), s.entries...)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return
			}
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "GET reads the ledger, POST appends a write", http.StatusMethodNotAllowed)
	}
}

// Parse reads a ledger as GET returns it.
func Parse(b []byte) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, maxWrite), 4*maxWrite)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("ledger line %d: %w", line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// TimeBody is how TimePath writes the ledger's clock: RFC 3339 with
// nanoseconds.
func TimeBody(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) + "\n" }

// ParseTime reads TimePath's answer.
func ParseTime(b []byte) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, string(bytes.TrimSpace(b)))
	if err != nil {
		return time.Time{}, fmt.Errorf("the ledger's clock answered %q, not an RFC 3339 time: %w", firstBytes(b, 80), err)
	}
	return t, nil
}

func firstBytes(b []byte, n int) []byte { return b[:min(len(b), n)] }

// Body encodes a write for POST.
func Body(w Write) ([]byte, error) { return json.Marshal(w) }
