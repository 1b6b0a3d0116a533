package sidecar

import (
	"fmt"
	"sort"

	"github.com/termlab/termlab/internal/evidence"
	"github.com/termlab/termlab/internal/report"
)

// Kinds of the moments the picture numbers.
const (
	momentExit    = "exit"
	momentSIGTERM = "sigterm"
)

// Moments are each pod's shutdown order for the picture, numbered in time
// order on the containers' lanes: the main container's exit, then each
// sidecar's SIGTERM and exit (in pod sidecars: sidecar-b's, started last,
// before sidecar-a's). The times are the claims' own (shutdownOf).
func Moments(rec *evidence.Record) []report.Marker {
	var out []report.Marker
	for _, pod := range thePods {
		p := shutdownOf(rec, pod.name)
		var ms []report.Marker
		for _, name := range exitOrder {
			c := p.Containers[name]
			if c.Sigterm != nil && name != mainName {
				ms = append(ms, report.Marker{At: *c.Sigterm, Pod: p.Pod, Container: name, Kind: momentSIGTERM,
					Label: fmt.Sprintf("%s: %s%s gets SIGTERM (its log)", p.Pod, name, startedNote(name))})
			}
			if c.Finished != nil {
				code := ""
				if c.ExitCode != nil {
					code = fmt.Sprintf(" %d", *c.ExitCode)
				}
				ms = append(ms, report.Marker{At: *c.Finished, Pod: p.Pod, Container: name, Kind: momentExit,
					Label: fmt.Sprintf("%s: %s exits%s (%s)", p.Pod, name, code, c.FinishedBy)})
			}
		}
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].At.Before(ms[j].At) })
		out = append(out, ms...)
	}
	return out
}

// startedNote says where a sidecar came in the start order.
func startedNote(name string) string {
	switch name {
	case sidecarsInStartOrder[0]:
		return ", started first,"
	case sidecarsInStartOrder[len(sidecarsInStartOrder)-1]:
		return ", started last,"
	}
	return ""
}
