package mutants_test

import (
	"os"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/mutants"
	"github.com/termlab/termlab/labs"
)

func TestDebugPrint(t *testing.T) {
	start := time.Now()
	res, err := mutants.RunAll("../..", labs.All)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("took %s", time.Since(start))
	f, _ := os.Create("/tmp/mut.txt")
	mutants.Print(f, res)
	f.Close()
}
