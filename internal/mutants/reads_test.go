package mutants

import (
	"testing"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/labs/force"
)

// The analysis follows a method to the field it reads, and a lab's claims
// to what they can reach.
func TestReadsAreDerivedFromTheSource(t *testing.T) {
	graphOnce.Do(func() { theGraph, graphErr = analyse("../..") })
	if graphErr != nil {
		t.Fatal(graphErr)
	}
	reads, err := theGraph.readsFrom("(*" + recordType[:len(recordType)-len(".Record")] + ".Record).EventsFor")
	if err != nil {
		t.Fatal(err)
	}
	// PodEvents, and what Record's methods that an interface outside the
	// module also names may read (Pods, as client-go's CoreV1Interface
	// has it): not the client's log, the journal or the mount looks.
	if !reads["PodEvents"] || reads["Requests"] || reads["Journal"] || reads["Mounts"] {
		t.Errorf("EventsFor reads %v, want PodEvents", sortedKeys(reads))
	}

	reads, err = staticReads("../..", lab.Definition{Name: "force", Claims: force.Claims})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Containers", "PodEvents", "Actions"} {
		if !reads[f] {
			t.Errorf("lab:force's claims read %v: no %s", sortedKeys(reads), f)
		}
	}
	// lab:force has no client, journal or mount looks, and its claims
	// never look for them.
	for _, f := range []string{"Requests", "Journal", "Mounts"} {
		if reads[f] {
			t.Errorf("lab:force's claims can read %s", f)
		}
	}
	// evidence.Load hands the Record to encoding/json: every field counts.
	evidencePkg := recordType[:len(recordType)-len(".Record")]
	reads, err = theGraph.readsFrom(evidencePkg + ".Load")
	if err != nil {
		t.Fatal(err)
	}
	if !reads["Journal"] || !reads["Mounts"] || !reads["Requests"] {
		t.Errorf("evidence.Load reads %v, want every field", sortedKeys(reads))
	}
	if got, want := funcKey((*evidence.Record).EventsFor), "(*"+evidencePkg+".Record).EventsFor"; got != want {
		t.Errorf("funcKey of a method expression: %q, want %q", got, want)
	}
	rec := &evidence.Record{}
	if got, want := funcKey(rec.EventsFor), "(*"+evidencePkg+".Record).EventsFor"; got != want {
		t.Errorf("funcKey of a method value: %q, want %q", got, want)
	}
	if _, err := theGraph.readsFrom("example.com/not/here.Claims"); err == nil {
		t.Error("a function outside the module's source was analysed")
	}
}
