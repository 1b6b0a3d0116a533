//go:build unix

package scale

import (
	"runtime"
	"syscall"
)

// processUsage is what this process has spent so far.
type processUsage struct{ cpuSeconds, peakRSSMiB float64 }

func selfUsage() processUsage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	rss := float64(ru.Maxrss) / 1024 // Linux: KiB
	if runtime.GOOS == "darwin" {
		rss /= 1024 // macOS: bytes
	}
	return processUsage{
		cpuSeconds: float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6,
		peakRSSMiB: rss,
	}
}
