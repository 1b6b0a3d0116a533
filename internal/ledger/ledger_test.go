package ledger

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestServerKeepsWritesInArrivalOrderStampedOnItsClock(t *testing.T) {
	clock := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	s := NewServer(func() time.Time { clock = clock.Add(time.Second); return clock })
	for i, w := range []Write{{Pod: "ident-0", UID: "a", Node: "n2", Seq: 7}, {Pod: "ident-0", UID: "b", Node: "n1", Seq: 1}} {
		body, err := Body(w)
		if err != nil {
			t.Fatal(err)
		}
		rr := httptest.NewRecorder()
		s.ServeHTTP(rr, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body))))
		if rr.Code != http.StatusNoContent {
			t.Fatalf("write %d: status %d", i, rr.Code)
		}
	}
	rr := httptest.NewRecorder()
	s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/", nil))
	got, err := Parse(rr.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UID != "a" || got[0].Seq != 7 || got[1].UID != "b" {
		t.Fatalf("entries %+v", got)
	}
	if !got[1].ReceivedAt.Equal(got[0].ReceivedAt.Add(time.Second)) {
		t.Errorf("received at %s and %s, want one ledger second apart", got[0].ReceivedAt, got[1].ReceivedAt)
	}
}

func TestServerRejectsWhatIsNotAWrite(t *testing.T) {
	s := NewServer(nil)
	for _, tc := range []struct {
		method, body string
		want         int
	}{
		{http.MethodPost, "not json", http.StatusBadRequest},
		{http.MethodDelete, "", http.StatusMethodNotAllowed},
	} {
		rr := httptest.NewRecorder()
		s.ServeHTTP(rr, httptest.NewRequest(tc.method, "/", strings.NewReader(tc.body)))
		if rr.Code != tc.want {
			t.Errorf("%s %q: status %d, want %d", tc.method, tc.body, rr.Code, tc.want)
		}
	}
	rr := httptest.NewRecorder()
	s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/", nil))
	if rr.Body.Len() != 0 {
		t.Errorf("the ledger kept a rejected write: %q", rr.Body.String())
	}
}

func TestParseNamesTheBadLine(t *testing.T) {
	_, err := Parse([]byte("{\"uid\":\"a\"}\n\n{oops\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("err = %v, want one naming line 3", err)
	}
}

// The ledger answers GET /time with its own clock, to the nanosecond: what
// the recorder bounds the ledger's offset from.
func TestServerTellsItsClock(t *testing.T) {
	clock := time.Date(2026, 12, 7, 18, 0, 0, 123456789, time.FixedZone("ahead", 3600))
	s := NewServer(func() time.Time { return clock })
	rr := httptest.NewRecorder()
	s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, TimePath, nil))
	if rr.Code != http.StatusOK {
		t.Fatalf("status %d", rr.Code)
	}
	got, err := ParseTime(rr.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(clock) {
		t.Fatalf("the ledger's clock read %s, want %s", got, clock)
	}
	// The ledger itself is still what a GET of / answers.
	rr = httptest.NewRecorder()
	s.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/", nil))
	if entries, err := Parse(rr.Body.Bytes()); err != nil || len(entries) != 0 {
		t.Fatalf("GET /: %v, %v", entries, err)
	}
	if _, err := ParseTime([]byte(`{"received_at":"2026-12-07T18:00:00Z"}`)); err == nil {
		t.Fatal("a ledger line parsed as the ledger's clock")
	}
}
