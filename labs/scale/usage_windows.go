package scale

// processUsage is what this process has spent so far.
type processUsage struct{ cpuSeconds, peakRSSMiB float64 }

// selfUsage: zero on Windows, where labs do not run (cmd/termlab refuses
// them there: they need Linux or macOS with Docker); this file only lets
// the kubectl plugin, whose diagnose runs everywhere, build for Windows.
func selfUsage() processUsage { return processUsage{} }
