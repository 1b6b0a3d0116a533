package labs

import (
	"fmt"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Rerender writes a run folder's reports again with this code, from its
// record and its lab's claims: after a change to the reports or the claims'
// statements, the committed reference runs show it without being re-recorded.
// The verdict is decided anew; the run's errors are kept.
func Rerender(dir string) error {
	sum, err := report.ReadSummary(dir)
	if err != nil {
		return err
	}
	def, ok := ByName(sum.Lab)
	if !ok {
		return fmt.Errorf("%s: lab %q is not in labs/registry.go", dir, sum.Lab)
	}
	rec, err := evidence.Load(dir)
	if err != nil {
		return err
	}
	// A summary re-rendered over another run's record would pair one run's
	// id and times with the other's observations.
	if rec.RunID != sum.RunID {
		return fmt.Errorf("%s: summary.json is run %s but record.json is run %s: copy one whole run folder there (go tool mage results:reference -run=…)", dir, sum.RunID, rec.RunID)
	}
	decided := def.Claims(rec)
	sum.Claims, sum.Verdict = decided, claims.Overall(decided)
	if len(sum.Errors) > 0 {
		sum.Verdict = claims.Fail
	}
	return report.Write(dir, def.ReportRun(*sum, rec, decided))
}
