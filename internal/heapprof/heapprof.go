// Package heapprof writes heap profiles at named points of a run when
// TERMLAB_HEAPPROFILE_DIR names a folder: where a run's memory goes is read
// with `go tool pprof -top <binary> <file>`, not guessed. Unset, it does
// nothing.
package heapprof

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
)

// EnvDir is the variable naming the folder.
const EnvDir = "TERMLAB_HEAPPROFILE_DIR"

var seq atomic.Int64

// At writes <dir>/<n>-<point>.pprof after a garbage collection (so the
// profile is what is live) and returns a line with the runtime's own
// figures for the log; "" when the variable is unset.
func At(point string) string {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return ""
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	line := fmt.Sprintf("heap at %s: live %s, heap from the OS %s, stacks %s, runtime total %s",
		point, mib(m.HeapAlloc), mib(m.HeapSys-m.HeapReleased), mib(m.StackSys), mib(m.Sys-m.HeapReleased))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return line + "; " + err.Error()
	}
	path := filepath.Join(dir, fmt.Sprintf("%02d-%s.pprof", seq.Add(1), point))
	f, err := os.Create(path)
	if err != nil {
		return line + "; " + err.Error()
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return line + "; writing " + path + ": " + err.Error()
	}
	return line + "; profile " + path
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
