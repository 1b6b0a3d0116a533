package diagnose

import "strings"

// Exit codes of `termlab diagnose` and `kubectl termlab diagnose`. They are
// part of the command's contract (scripts branch on them): never renumber.
const (
	// ExitClear: nothing holds the object. No blocking finding and nothing
	// not checked that matters; or it is not being deleted and nothing
	// would hold it; or it is gone and no process of it runs on the nodes
	// searched.
	ExitClear = 0
	// ExitHeld: held, and the cause found: at least one blocking finding.
	ExitHeld = 1
	// ExitUndecided: could not decide. No blocking finding, but evidence
	// that could hold the answer was not checked (or the object could not
	// be read at all).
	ExitUndecided = 2
	// ExitUsage: bad flags or arguments; nothing was read.
	ExitUsage = 3
	// ExitInterrupted: stopped by Ctrl-C (or SIGTERM, SIGHUP) before it
	// decided; 128 + SIGINT, as a shell reports a command it interrupted.
	ExitInterrupted = 130
)

// verdictNotRequested is the verdict of FindDeletion and FindNSDeletion when
// the object has no deletionTimestamp. Decide spells it; outcome_test.go
// checks that the two agree.
const verdictNotRequested = "not requested"

// Outcome classifies a diagnosis's findings (a pod's or a namespace's) into
// its exit code, with a short reason for people. It reads levels and ids
// only: never the words of a finding.
func Outcome(findings []Finding) (code int, why string) {
	var blocking, unchecked []string
	for _, f := range findings {
		switch {
		case f.Level == Blocking:
			blocking = append(blocking, f.ID)
		case f.Level == NotChecked && notCheckedMatters(f, findings):
			unchecked = append(unchecked, f.ID)
		}
	}
	switch {
	case len(blocking) > 0:
		return ExitHeld, "held; blocking: " + strings.Join(blocking, ", ")
	case len(unchecked) > 0:
		return ExitUndecided, "could not decide; not checked: " + strings.Join(unchecked, ", ")
	}
	if hasID(findings, FindGone) && !anyPrefix(findings, FindLeftover("")) {
		// decideGone says so in its answer but has no finding for it: no
		// node was known to search, so a process of it may still run.
		return ExitUndecided, "could not decide: the pod is gone and no node was searched for its containers"
	}
	if notRequested(findings) {
		return ExitClear, "nothing holds it: its deletion was not requested"
	}
	return ExitClear, "nothing holds it"
}

// notCheckedMatters says whether a not-checked finding leaves the answer
// open. It does not when the object is not being deleted (nothing holds an
// object nobody deletes), nor for the finalizer-removal dry run when there is
// no finalizer to remove (the dry run is skipped for want of one).
func notCheckedMatters(f Finding, all []Finding) bool {
	if notRequested(all) {
		return false
	}
	if f.ID == FindDryRun && !anyPrefix(all, FindFinalizer("")) {
		return false
	}
	return true
}

// notRequested: the pod's or namespace's deletion finding says no deletion was requested.
func notRequested(findings []Finding) bool {
	for _, f := range findings {
		if (f.ID == FindDeletion || f.ID == FindNSDeletion) && f.Verdict == verdictNotRequested {
			return true
		}
	}
	return false
}

func anyPrefix(findings []Finding, prefix string) bool {
	for _, f := range findings {
		if strings.HasPrefix(f.ID, prefix) {
			return true
		}
	}
	return false
}

func hasID(findings []Finding, id string) bool {
	for _, f := range findings {
		if f.ID == id {
			return true
		}
	}
	return false
}
