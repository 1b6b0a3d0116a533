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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/termlab/termlab/internal/apiload"
	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/invocation"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/scaleruns"
	"github.com/termlab/termlab/internal/stack"
)

// Figures is one measurement run.
type Figures struct {
	ImagesCachedSeconds float64 `json:"images_cached_seconds"`
	// Rounds are bare kind create and cluster:up from no cluster, one after
	// the other: kind's own create varies by seconds between runs on a
	// loaded 2-core machine, so one pair decides nothing.
	Rounds []Round `json:"rounds"`
	// BareKindSeconds and UpSeconds are the round with the median ratio.
	BareKindSeconds     float64 `json:"bare_kind_create_seconds"`
	BareAllReadySeconds float64 `json:"bare_kind_all_ready_seconds"`
	UpSeconds           float64 `json:"cluster_up_seconds"`
	// UpSteps is where that round's cluster:up time went.
	UpSteps      []Step  `json:"cluster_up_steps,omitempty"`
	ReuseSeconds float64 `json:"cluster_up_reuse_seconds"`
	// APIWrites is the API server's pod write ceiling on the measured
	// cluster (internal/apiload), Scale lab:scale's latest passing run.
	// APIWrites is the median create and the median delete rate of
	// APIWriteRounds: one load on a 2-core machine varies with whatever
	// else runs.
	APIWrites      apiload.Figures   `json:"api_writes"`
	APIWriteRounds []apiload.Figures `json:"api_write_rounds"`
	Scale          *scaleruns.Rates  `json:"scale,omitempty"`
	// ScaleRaised is the newest passing lab:scale -limits=raised run.
	ScaleRaised *scaleruns.Rates `json:"scale_raised,omitempty"`
	Builds      []Build          `json:"builds"`
}

// Round is one bare kind create and the cluster:up right after it.
type Round struct {
	BareKindSeconds float64 `json:"bare_kind_create_seconds"`
	// BareAllReadySeconds goes on until every node is Ready, as cluster:up
	// does: kind returns once the control plane is, before the workers.
	BareAllReadySeconds float64 `json:"bare_kind_all_ready_seconds"`
	UpSeconds           float64 `json:"cluster_up_seconds"`
	UpSteps             []Step  `json:"cluster_up_steps,omitempty"`
}

// Ratio is cluster:up over bare kind create (0 without a bare time).
func (r Round) Ratio() float64 {
	if r.BareKindSeconds <= 0 {
		return 0
	}
	return r.UpSeconds / r.BareKindSeconds
}

// median picks the round with the median ratio (of an even count the upper
// middle one: the figure errs against termlab) and sets the summary from it.
func (f *Figures) median() {
	if len(f.Rounds) == 0 {
		return
	}
	sorted := append([]Round(nil), f.Rounds...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Ratio() < sorted[j].Ratio() })
	m := sorted[len(sorted)/2]
	f.BareKindSeconds, f.BareAllReadySeconds, f.UpSeconds, f.UpSteps = m.BareKindSeconds, m.BareAllReadySeconds, m.UpSeconds, m.UpSteps
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

// Run measures, in order: resolving images from the cache; then rounds
// times a bare kind create of termlab's cluster config under another name
// (deleted again) followed by cluster:up's own path from no cluster — images,
// kind create, kwok and its fake nodes — under a third name; and cluster:up
// reusing the last of those healthy clusters (best of three), which is then
// deleted. termlab's own cluster is not touched: it stays as it was,
// whoever is using it.
func Run(ctx context.Context, log *progress.Logger, w io.Writer, rounds int) (f Figures, err error) {
	if rounds < 1 {
		return f, fmt.Errorf("measure: rounds=%d, want at least 1", rounds)
	}
	o, err := stack.OptionsFromEnv()
	if err != nil {
		return f, err
	}
	begin := time.Now()
	set, _, err := stack.Images(ctx, log, o.Root, o.Images)
	if err != nil {
		return f, err
	}
	f.ImagesCachedSeconds = time.Since(begin).Seconds()

	co := stack.ClusterOptions(o.Root)
	up := co
	up.Name = upName
	up.KubeconfigPath = filepath.Join(os.TempDir(), "termlab-measure.kubeconfig")
	// upCluster is cluster:up's path; steps gets its images time and the
	// steps of UpCluster (the image builds' own steps stay out: all cached).
	var env *cluster.Env
	upCluster := func(steps *stepTimes) error {
		begin := time.Now()
		set, dockerVersion, err := stack.Images(ctx, log, o.Root, o.Images)
		if err != nil {
			return err
		}
		steps.add("images", time.Since(begin))
		env, err = stack.UpCluster(ctx, steps.logger(log), stack.ClusterSpec{Options: up, Images: set, DockerVersion: dockerVersion, FakeNodes: o.FakeNodes})
		return err
	}
	defer func() { // a failed or interrupted measure; otherwise it is deleted below
		if err != nil {
			_ = cluster.Down(context.WithoutCancel(ctx), log, up)
		}
	}()
	for i := range rounds {
		log.Infof("measure: round %d of %d", i+1, rounds)
		var r Round
		bare, bareReady, err := bareCreate(ctx, log, co, set.Node, set.ImageRepository)
		if err != nil {
			return f, err
		}
		r.BareKindSeconds, r.BareAllReadySeconds = bare.Seconds(), bareReady.Seconds()
		if err := cluster.Down(ctx, log, up); err != nil { // the round before's, or an interrupted measure's
			return f, err
		}
		steps := &stepTimes{}
		begin = time.Now()
		err = upCluster(steps)
		r.UpSeconds, r.UpSteps = time.Since(begin).Seconds(), steps.list
		if err != nil {
			return f, err
		}
		log.Infof("measure: round %d: bare kind %.1f s, cluster:up %.1f s (%.2f×)", i+1, r.BareKindSeconds, r.UpSeconds, r.Ratio())
		f.Rounds = append(f.Rounds, r)
	}
	f.median()
	// Reuse: cluster:up's whole path (images, health, loads, kwok) on the
	// healthy cluster it just made, best of three. On termlab's own cluster
	// the time would include waiting for whatever lab holds its run lock.
	for i := range 3 {
		begin = time.Now()
		if err := upCluster(&stepTimes{}); err != nil {
			return f, err
		}
		if took := time.Since(begin).Seconds(); i == 0 || took < f.ReuseSeconds {
			f.ReuseSeconds = took
		}
	}
	for i := range apiLoadRounds {
		done := log.Step(fmt.Sprintf("API server pod writes, round %d of %d: %d gated pods created, then deleted, by %d clients", i+1, apiLoadRounds, apiLoadPods, apiLoadWorkers))
		a, err := apiload.Run(ctx, env.RESTConfig, apiload.Options{
			// A namespace per round: the last round's is still being deleted.
			Pods: apiLoadPods, Workers: apiLoadWorkers, Namespace: fmt.Sprintf("termlab-apiload-%d", i+1), Log: log,
		})
		done(err)
		if err != nil {
			return f, err
		}
		f.APIWriteRounds = append(f.APIWriteRounds, a)
	}
	f.APIWrites = apiload.Median(f.APIWriteRounds)
	if err := cluster.Down(context.WithoutCancel(ctx), log, up); err != nil {
		return f, err
	}
	if f.Scale, err = scaleruns.Latest(project.ResultsDir(o.Root), scaleruns.WithLimits(cluster.LimitsDefault)); err != nil {
		return f, err
	}
	if f.ScaleRaised, err = scaleruns.Latest(project.ResultsDir(o.Root), scaleruns.WithLimits(cluster.LimitsRaised)); err != nil {
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

// bareCreate times kind's own create of the same config under another name
// (kind waits for the control plane Ready, as its CLI does by default), then
// on until every node is Ready, and deletes it.
func bareCreate(ctx context.Context, log *progress.Logger, co cluster.Options, image, repo string) (create, allReady time.Duration, err error) {
	base, err := os.ReadFile(co.ConfigPath)
	if err != nil {
		return 0, 0, err
	}
	name := bareName
	cfg, err := cluster.RenderConfig(base, name, cluster.HostFacts{CgroupV1: cluster.DetectCgroupV1(), ImageRepository: repo})
	if err != nil {
		return 0, 0, err
	}
	// As cluster:up does: the audit policy's mount is relative to the config.
	cluster.ResolveMounts(cfg, filepath.Dir(co.ConfigPath))
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	kubeconfig := filepath.Join(os.TempDir(), "termlab-bare.kubeconfig")
	defer os.Remove(kubeconfig)
	_ = cluster.Delete(ctx, log, p, name, kubeconfig) // a leftover of an interrupted measure
	done := log.Step("bare kind create of the same config (" + name + ")")
	begin := time.Now()
	err = p.Create(name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithNodeImage(image),
		kindcluster.CreateWithKubeconfigPath(kubeconfig), kindcluster.CreateWithWaitForReady(5*time.Minute),
		kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false))
	create = time.Since(begin)
	done(err)
	if err == nil {
		var restCfg *rest.Config
		var client kubernetes.Interface
		restCfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err == nil {
			client, err = kubernetes.NewForConfig(restCfg)
		}
		if err == nil {
			err = cluster.WaitNodesReady(ctx, client, 2*time.Minute, nil)
		}
		allReady = time.Since(begin)
	}
	if delErr := cluster.Delete(ctx, log, p, name, kubeconfig); delErr != nil && err == nil {
		err = delErr
	}
	return create, allReady, err
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
	for i, r := range f.Rounds {
		fmt.Fprintf(w, "round %d: bare kind create %5.1f s (every node Ready %5.1f s), cluster:up from no cluster %5.1f s: %.2f×\n", i+1, r.BareKindSeconds, r.BareAllReadySeconds, r.UpSeconds, r.Ratio())
	}
	median := Round{BareKindSeconds: f.BareKindSeconds, UpSeconds: f.UpSeconds}
	which := "the median round"
	if len(f.Rounds) <= 1 {
		which = "one round"
	}
	fmt.Fprintf(w, "bare kind create (same config):  %6.1f s  (%s; kind waits for the control plane only)\n", f.BareKindSeconds, which)
	if f.BareAllReadySeconds > 0 {
		fmt.Fprintf(w, "  … until every node is Ready:   %6.1f s  (cluster:up is %.2f× that)\n", f.BareAllReadySeconds, f.UpSeconds/f.BareAllReadySeconds)
	}
	fmt.Fprintf(w, "cluster:up, no cluster:          %6.1f s  (%.2f× bare kind, target ≤ 1.15×; includes images, kwok, fake nodes, every node Ready)\n", f.UpSeconds, median.Ratio())
	for _, s := range f.UpSteps {
		fmt.Fprintf(w, "    %-60s %6.1f s\n", s.Name, s.Seconds)
	}
	fmt.Fprintf(w, "cluster:up, reusing (best of 3): %6.1f s  (target < 5 s; in-process, the same path on the healthy cluster)\n", f.ReuseSeconds)
	a := f.APIWrites
	for i, r := range f.APIWriteRounds {
		fmt.Fprintf(w, "API server pod writes, round %d: create %.0f/s, delete (grace 0) %.0f/s; %d failed, %d answered 429\n", i+1, r.CreatePerSecond, r.DeletePerSecond, r.CreateFailed+r.DeleteFailed, r.TooManyRequests)
	}
	fmt.Fprintf(w, "API server pod writes, nothing else in the way (%d gated pods, %d clients, no client-side limit; median of %d rounds): create %.0f/s (%s), delete (grace 0) %.0f/s (%s)\n",
		a.Pods, a.Workers, len(f.APIWriteRounds), a.CreatePerSecond, apiload.Spread(f.APIWriteRounds, func(r apiload.Figures) float64 { return r.CreatePerSecond }),
		a.DeletePerSecond, apiload.Spread(f.APIWriteRounds, func(r apiload.Figures) float64 { return r.DeletePerSecond }))
	for _, sc := range []struct {
		limits cluster.Limits
		rates  *scaleruns.Rates
	}{{cluster.LimitsDefault, f.Scale}, {cluster.LimitsRaised, f.ScaleRaised}} {
		if sc.rates == nil {
			fmt.Fprintf(w, "  (no passing lab:scale -limits=%s run in results/scale to compare: %s)\n", sc.limits, invocation.Command("lab:scale", "-limits="+string(sc.limits)))
			continue
		}
		r := sc.rates
		fmt.Fprintf(w, "  lab:scale's latest passing run with %s limits (%s, %d pods): created at %.1f pods/s = %s of the create ceiling, DELETED at %.1f pods/s = %s of the delete ceiling\n",
			sc.limits, r.RunID, r.Pods, r.CreatePerSecond, apiload.Fraction(r.CreatePerSecond, a.CreatePerSecond), r.DeletedPerSecond, apiload.Fraction(r.DeletedPerSecond, a.DeletePerSecond))
	}
	fmt.Fprintf(w, "\n%-22s %10s %10s %6s\n", "build step", "cold (s)", "warm (s)", "runs")
	for _, b := range f.Builds {
		fmt.Fprintf(w, "%-22s %10.1f %10.3f %6d\n", b.Name, b.ColdSeconds, b.WarmSeconds, b.Runs)
	}
}

// The API write load's size: enough requests that the rate is the server's
// steady state (2,000 at a few hundred per second is seconds), and more
// clients than the API server has cores, so it is never waiting on one.
const (
	apiLoadPods    = 2000
	apiLoadWorkers = 32
	// apiLoadRounds: three loads, so a spread shows (each is ~20 s here).
	apiLoadRounds = 3
)
