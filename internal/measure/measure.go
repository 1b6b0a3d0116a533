// Package measure times the cluster lifecycle and summarises the build cache
// records. It prints figures; it asserts nothing (targets belong in numbers a
// person reads, not in timed tests that flake).
package measure

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/stack"
)

// Figures is one measurement run.
type Figures struct {
	ImagesCachedSeconds float64 `json:"images_cached_seconds"`
	BareKindSeconds     float64 `json:"bare_kind_create_seconds"`
	UpSeconds           float64 `json:"cluster_up_seconds"`
	// UpSteps is where cluster:up's time from no cluster went.
	UpSteps      []Step  `json:"cluster_up_steps,omitempty"`
	ReuseSeconds float64 `json:"cluster_up_reuse_seconds"`
	Builds       []Build `json:"builds"`
}

// Step is one timed part of cluster:up.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Build summarises the cache records of one build step.
type Build struct {
	Name        string  `json:"name"`
	ColdSeconds float64 `json:"cold_seconds"` // newest build that did the work
	WarmSeconds float64 `json:"warm_seconds"` // newest cache hit
	Runs        int     `json:"runs"`
}

// Names of the throw-away clusters: termlab's own cluster is never deleted
// or recreated here (another session may be running labs on it).
const (
	bareName = "termlab-measure-bare"
	upName   = "termlab-measure"
)

// Run measures, in order: resolving images from the cache; a bare kind
// create of termlab's cluster config under another name (deleted again);
// cluster:up's own path from no cluster — images, kind create, image loads,
// kwok and its fake nodes — under a third name; and cluster:up reusing that
// healthy cluster (best of three), which is then deleted. termlab's own
// cluster is not touched: it stays as it was, whoever is using it.
func Run(ctx context.Context, log *progress.Logger, w io.Writer) (Figures, error) {
	var f Figures
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return f, err
	}
	begin := time.Now()
	set, dockerVersion, err := stack.Images(ctx, log, o.Root, o.Images)
	if err != nil {
		return f, err
	}
	f.ImagesCachedSeconds = time.Since(begin).Seconds()

	co := stack.ClusterOptions(o.Root)
	bare, err := bareCreate(ctx, log, co, set.Node, set.ImageRepository)
	if err != nil {
		return f, err
	}
	f.BareKindSeconds = bare.Seconds()

	up := co
	up.Name = upName
	up.KubeconfigPath = filepath.Join(os.TempDir(), "termlab-measure.kubeconfig")
	_ = cluster.Down(ctx, log, up) // a leftover of an interrupted measure
	steps := &stepTimes{}
	begin = time.Now()
	set, dockerVersion, err = stack.Images(ctx, log, o.Root, o.Images)
	if err == nil {
		steps.add("images", time.Since(begin))
		_, err = stack.UpCluster(ctx, steps.logger(log), stack.ClusterSpec{Options: up, Images: set, DockerVersion: dockerVersion, FakeNodes: o.FakeNodes})
	}
	f.UpSeconds = time.Since(begin).Seconds()
	f.UpSteps = steps.list
	// Reuse: cluster:up's whole path (images, health, loads, kwok) on the
	// healthy cluster it just made, best of three. On termlab's own cluster
	// the time would include waiting for whatever lab holds its run lock.
	for i := 0; i < 3 && err == nil; i++ {
		begin = time.Now()
		set, dockerVersion, err = stack.Images(ctx, log, o.Root, o.Images)
		if err == nil {
			_, err = stack.UpCluster(ctx, log, stack.ClusterSpec{Options: up, Images: set, DockerVersion: dockerVersion, FakeNodes: o.FakeNodes})
		}
		if took := time.Since(begin).Seconds(); i == 0 || took < f.ReuseSeconds {
			f.ReuseSeconds = took
		}
	}
	if derr := cluster.Down(context.WithoutCancel(ctx), log, up); derr != nil && err == nil {
		err = derr
	}
	if err != nil {
		return f, err
	}
	f.Builds, err = ReadBuilds(project.CacheDir())
	if err != nil {
		return f, err
	}
	Print(w, f)
	return f, nil
}

// stepTimes collects the durations of the progress steps cluster:up reports.
type stepTimes struct {
	mu   sync.Mutex
	list []Step
}

func (s *stepTimes) add(name string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, Step{Name: name, Seconds: d.Seconds()})
}

// logger is log, with every finished step's duration also collected.
func (s *stepTimes) logger(log *progress.Logger) *progress.Logger {
	return log.WithStepHook(func(name string, d time.Duration) { s.add(name, d) })
}

// bareCreate times kind's own create of the same config under another name, then deletes it.
func bareCreate(ctx context.Context, log *progress.Logger, co cluster.Options, image, repo string) (time.Duration, error) {
	base, err := os.ReadFile(co.ConfigPath)
	if err != nil {
		return 0, err
	}
	name := bareName
	cfg, err := cluster.RenderConfig(base, name, cluster.HostFacts{CgroupV1: cluster.DetectCgroupV1(), ImageRepository: repo})
	if err != nil {
		return 0, err
	}
	// As cluster:up does: the audit policy's mount is relative to the config.
	cluster.ResolveMounts(cfg, filepath.Dir(co.ConfigPath))
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	kubeconfig := filepath.Join(os.TempDir(), "termlab-bare.kubeconfig")
	defer os.Remove(kubeconfig)
	_ = p.Delete(name, kubeconfig) // a leftover of an interrupted measure
	done := log.Step("bare kind create of the same config (" + name + ")")
	begin := time.Now()
	err = p.Create(name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithNodeImage(image),
		kindcluster.CreateWithKubeconfigPath(kubeconfig), kindcluster.CreateWithWaitForReady(5*time.Minute),
		kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false))
	took := time.Since(begin)
	done(err)
	if delErr := p.Delete(name, kubeconfig); delErr != nil && err == nil {
		err = delErr
	}
	return took, err
}

type record struct {
	Recipe          string    `json:"recipe"` // gobuild records
	Name            string    `json:"name"`   // image records
	Cached          bool      `json:"cached"`
	DurationSeconds float64   `json:"duration_seconds"`
	Started         time.Time `json:"started"`
	FinishedAt      time.Time `json:"finished_at"`
}

// ReadBuilds summarises builds.jsonl (Go binaries) and image-builds.jsonl (images).
func ReadBuilds(cacheDir string) ([]Build, error) {
	byName := map[string]*Build{}
	for _, file := range []string{"builds.jsonl", "image-builds.jsonl"} {
		f, err := os.Open(filepath.Join(cacheDir, file))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := summarise(f, byName); err != nil {
			f.Close()
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		f.Close()
	}
	out := make([]Build, 0, len(byName))
	for _, b := range byName {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// summarise keeps, per build name, the last cold and the last warm duration (records are in time order).
func summarise(r io.Reader, byName map[string]*Build) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		var rec record
		if err := json.Unmarshal(s.Bytes(), &rec); err != nil {
			continue // a torn line from an interrupted build
		}
		name := rec.Recipe
		if name == "" {
			name = rec.Name
		}
		if name == "" {
			continue
		}
		b := byName[name]
		if b == nil {
			b = &Build{Name: name}
			byName[name] = b
		}
		b.Runs++
		if rec.Cached {
			b.WarmSeconds = rec.DurationSeconds
		} else {
			b.ColdSeconds = rec.DurationSeconds
		}
	}
	return s.Err()
}

// Print writes the figures for a person.
func Print(w io.Writer, f Figures) {
	fmt.Fprintf(w, "images resolved from cache:      %6.1f s\n", f.ImagesCachedSeconds)
	fmt.Fprintf(w, "bare kind create (same config):  %6.1f s\n", f.BareKindSeconds)
	ratio := 0.0
	if f.BareKindSeconds > 0 {
		ratio = f.UpSeconds / f.BareKindSeconds
	}
	fmt.Fprintf(w, "cluster:up, no cluster:          %6.1f s  (%.2f× bare kind, target ≤ 1.15×; includes images, image loads, kwok, fake nodes)\n", f.UpSeconds, ratio)
	for _, s := range f.UpSteps {
		fmt.Fprintf(w, "    %-60s %6.1f s\n", s.Name, s.Seconds)
	}
	fmt.Fprintf(w, "cluster:up, reusing (best of 3): %6.1f s  (target < 5 s; in-process, the same path on the healthy cluster)\n", f.ReuseSeconds)
	fmt.Fprintf(w, "\n%-22s %10s %10s %6s\n", "build step", "cold (s)", "warm (s)", "runs")
	for _, b := range f.Builds {
		fmt.Fprintf(w, "%-22s %10.1f %10.3f %6d\n", b.Name, b.ColdSeconds, b.WarmSeconds, b.Runs)
	}
}
