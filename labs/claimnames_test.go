package labs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/matrix"
)

// The matrix names claims of the labs by id and by the end of an id; a
// claim renamed in its lab would leave the matrix checking nothing. Every
// name must be a claim some lab states on its reference record.
func TestMatrixNamesClaimsThatExist(t *testing.T) {
	stated := map[string]bool{}
	for _, d := range All {
		rec, err := evidence.Load(filepath.Join("..", "results", "reference", d.Name))
		if err != nil {
			t.Fatalf("%s: the reference record: %v", d.Name, err)
		}
		for _, c := range d.Claims(rec) {
			stated[c.ID] = true
		}
	}
	ids, suffixes := matrix.ClaimNames()
	for _, id := range ids {
		if !stated[id] {
			t.Errorf("the matrix expects claim %q, which no lab states", id)
		}
	}
	for _, s := range suffixes {
		found := false
		for id := range stated {
			found = found || strings.HasSuffix(id, s)
		}
		if !found {
			t.Errorf("the matrix names claims ending in %q; no lab states one", s)
		}
	}
}
