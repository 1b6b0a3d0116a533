package matrix

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/dockerhost"
	"github.com/termlab/termlab/internal/gobuild"
	"github.com/termlab/termlab/internal/images"
	"github.com/termlab/termlab/internal/lab"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/stack"
)

// Provider brings up and deletes the cluster of one release. KindProvider
// makes one kind cluster per release; a test can hand out an existing
// cluster under a second, fake release.
type Provider interface {
	// Up returns the release's cluster, with kwok when needKwok, and fills
	// col with where its images came from and how long that took.
	Up(ctx context.Context, version string, needKwok bool, col *Column) (*cluster.Env, error)
	// Down deletes the release's cluster.
	Down(ctx context.Context, version string) error
}

// Options for Run; Versions and Labs are required.
type Options struct {
	Versions []string         // v1.37.2, v1.36.3, ... in table order
	Labs     []lab.Definition // run in this order on every release
	Root     string           // the repository (default: found from the working directory)
	// OutDir is the matrix folder (default results/matrix/<UTC time>).
	OutDir string
	// Keep leaves every release's cluster running (and says so in the table).
	Keep     bool
	Log      *progress.Logger
	Provider Provider // default: KindProvider from Root, TERMLAB_IMAGES and TERMLAB_FAKE_NODES
	// LabTimeout bounds each lab's steps (lab.Options.Timeout; default its own).
	LabTimeout time.Duration
}

// deleteTimeout bounds deleting a release's cluster, which runs even after an interrupt.
const deleteTimeout = 3 * time.Minute

// Run brings up each release's cluster in turn, runs the labs on it through
// lab.Execute (each run's folder under <OutDir>/<release>/<lab>/<run id>/),
// deletes the cluster unless Keep, and writes matrix.json and matrix.md into
// OutDir. A failed claim is a result, in the table; the error says which
// releases could not be measured and which lab runs could not complete.
func Run(ctx context.Context, o Options) (Table, string, error) {
	if len(o.Versions) == 0 || len(o.Labs) == 0 {
		return Table{}, "", errors.New("matrix: no versions or no labs")
	}
	if o.Log == nil {
		o.Log = progress.Default()
	}
	if o.Root == "" {
		root, err := project.Root()
		if err != nil {
			return Table{}, "", err
		}
		o.Root = root
	}
	log := o.Log
	started := time.Now().UTC()
	if o.OutDir == "" {
		o.OutDir = filepath.Join(project.ResultsDir(o.Root), "matrix", started.Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return Table{}, "", err
	}
	if o.Provider == nil {
		so, err := stack.OptionsFromEnv() // TERMLAB_IMAGES, TERMLAB_FAKE_NODES
		if err != nil {
			return Table{}, "", err
		}
		o.Provider = &KindProvider{Root: o.Root, Images: so.Images, FakeNodes: so.FakeNodes, Log: log}
	}
	needKwok := false
	var names []string
	for _, d := range o.Labs {
		needKwok = needKwok || d.Uses.FakeNode
		names = append(names, d.Name)
	}
	if !needKwok {
		log.Infof("matrix: no selected lab uses a kwok fake node: the clusters get no kwok")
	}
	log.Infof("matrix: labs %s on %s; results in %s", strings.Join(names, ", "), strings.Join(o.Versions, ", "), o.OutDir)

	var runs []VersionRun
	var problems []string
	for _, v := range o.Versions {
		if ctx.Err() != nil {
			problems = append(problems, v+": not started: "+ctx.Err().Error())
			runs = append(runs, VersionRun{Column: Column{Version: v, Cluster: ClusterName(v), Error: "not started: interrupted"}})
			continue
		}
		run, errs := runVersion(ctx, o, v, needKwok)
		runs = append(runs, run)
		problems = append(problems, errs...)
	}
	t := BuildTable(runs, Expectations)
	t.Started, t.Finished = started, time.Now().UTC()
	if err := t.Write(o.OutDir); err != nil {
		problems = append(problems, "writing the table: "+err.Error())
	}
	log.Infof("matrix: %d claims × %d releases, %d flag(s): %s", len(t.Rows), len(t.Columns), len(t.Flags), filepath.Join(o.OutDir, MarkdownFile))
	if len(problems) > 0 {
		return t, o.OutDir, errors.New("matrix: " + strings.Join(problems, "\n"))
	}
	return t, o.OutDir, nil
}

// Files of a matrix folder.
const (
	MarkdownFile = "matrix.md"
	JSONFile     = "matrix.json"
)

// Write writes matrix.json and matrix.md into dir.
func (t Table) Write(dir string) error {
	b, err := t.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, JSONFile), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, MarkdownFile), []byte(t.Markdown()), 0o644)
}

// runVersion's results are named: the deferred delete records into them.
func runVersion(ctx context.Context, o Options, v string, needKwok bool) (run VersionRun, problems []string) {
	log := o.Log
	run = VersionRun{Column: Column{Version: v, Cluster: ClusterName(v)}}
	col := &run.Column
	done := log.Step(fmt.Sprintf("matrix %s: cluster %s", v, col.Cluster))
	env, err := o.Provider.Up(ctx, v, needKwok, col)
	done(err)
	defer func() {
		if o.Keep {
			col.Kept = true
			log.Infof("matrix %s: cluster %s kept (-keep); delete it with: kind delete cluster --name %s", v, col.Cluster, col.Cluster)
			return
		}
		// Deleted even after an interrupt: a context of its own.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		defer cancel()
		t := time.Now()
		done := log.Step(fmt.Sprintf("matrix %s: deleting cluster %s", v, col.Cluster))
		err := o.Provider.Down(dctx, v)
		done(err)
		col.DeleteSeconds = time.Since(t).Seconds()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: deleting cluster %s: %v", v, col.Cluster, err))
		}
	}()
	if err != nil {
		col.Error = err.Error()
		return run, append(problems, fmt.Sprintf("%s: %v", v, err))
	}
	col.Cluster = env.Name // KindProvider's is ClusterName(v); a test provider's may be another
	// A provider may say what the server is (a test's fake release does).
	if col.Server == "" {
		col.Server = env.Versions.Kubernetes
		if col.Server != "" && col.Server != v {
			problems = append(problems, fmt.Sprintf("%s: the cluster's API server says %s", v, col.Server))
		}
	}
	if col.NodeImage == "" {
		col.NodeImage, col.NodeImageFrom, col.NodeImageDigest = env.Versions.NodeImage, env.Versions.NodeImageFrom, env.Versions.NodeImageDigest
	}
	if needKwok {
		col.Kwok = env.Versions.Kwok
	}
	labsStart := time.Now()
	resultsDir := filepath.Join(o.OutDir, v)
	for _, def := range o.Labs {
		t := time.Now()
		s, err := lab.Execute(ctx, env, def, lab.Options{ResultsDir: resultsDir, RepoRoot: o.Root, Log: log, Timeout: o.LabTimeout})
		lr := LabRun{Lab: def.Name, Verdict: NotRun, Seconds: time.Since(t).Seconds()}
		if s != nil {
			lr.RunID, lr.Verdict, lr.Errors = s.RunID, string(s.Verdict), s.Errors
			if rel, rerr := filepath.Rel(o.OutDir, s.Dir); rerr == nil {
				lr.Dir = filepath.ToSlash(rel)
			}
			run.Summaries = append(run.Summaries, *s)
		}
		if err != nil {
			if len(lr.Errors) == 0 {
				lr.Errors = []string{err.Error()}
			}
			problems = append(problems, fmt.Sprintf("%s: %s: %v", v, def.Title(), err))
		}
		col.Labs = append(col.Labs, lr)
		if ctx.Err() != nil {
			break
		}
	}
	col.LabsSeconds = time.Since(labsStart).Seconds()
	return run, problems
}

// KindProvider makes one kind cluster per release from the project's kind
// config: images resolved or built for the release (images.EnsureVersion),
// the cluster named ClusterName(release) with its own kubeconfig beside
// termlab's (.termlab/kubeconfig-<cluster>). It never touches the shared
// cluster "termlab".
type KindProvider struct {
	Root      string
	Images    images.Source
	FakeNodes int
	Log       *progress.Logger
}

func (p *KindProvider) options(version string) (cluster.Options, error) {
	co := stack.ClusterOptions(p.Root)
	co.Name = ClusterName(version)
	if co.Name == cluster.DefaultName {
		return co, fmt.Errorf("matrix: release %q would be named like the shared cluster", version)
	}
	co.KubeconfigPath = filepath.Join(project.StateDir(p.Root), "kubeconfig-"+co.Name)
	return co, nil
}

// Up resolves or builds the release's images and brings its cluster up.
func (p *KindProvider) Up(ctx context.Context, version string, needKwok bool, col *Column) (*cluster.Env, error) {
	co, err := p.options(version)
	if err != nil {
		return nil, err
	}
	dockerVersion, err := dockerhost.Ensure(ctx, p.Log, p.Root)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	set, err := images.EnsureVersion(ctx, p.Log, p.Root, p.Images, version)
	col.ImagesSeconds = time.Since(t).Seconds()
	col.Builds = buildsSince(t)
	if err != nil {
		return nil, fmt.Errorf("images for %s: %w", version, err)
	}
	col.NodeImage, col.NodeImageFrom, col.NodeImageDigest = set.Node, set.NodeFrom, set.NodeDigest
	t = time.Now()
	env, err := stack.UpCluster(ctx, p.Log, stack.ClusterSpec{
		Options: co, Images: set, DockerVersion: dockerVersion, FakeNodes: p.FakeNodes, NoKwok: !needKwok,
	})
	col.ClusterSeconds = time.Since(t).Seconds()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", co.Name, err)
	}
	return env, nil
}

// Down deletes the release's cluster and its kubeconfig.
func (p *KindProvider) Down(ctx context.Context, version string) error {
	co, err := p.options(version)
	if err != nil {
		return err
	}
	return cluster.Down(ctx, p.Log, co)
}

// buildsSince reads the build records (gobuild's builds.jsonl, the node
// image's image-builds.jsonl) written since t: what this release's images
// took, cached or built. A cached build's own time comes from its stamp.
func buildsSince(t time.Time) []Build {
	root, err := gobuild.DefaultCacheRoot()
	if err != nil {
		return nil
	}
	var out []Build
	readLines(filepath.Join(root, "builds.jsonl"), func(line []byte) {
		var r gobuild.Record
		// Another process's builds (a lab run beside the matrix) are not this release's.
		if json.Unmarshal(line, &r) != nil || r.Started.Before(t) || r.PID != 0 && r.PID != os.Getpid() {
			return
		}
		b := Build{Name: r.Recipe, Version: r.Version, Cached: r.Cached, Seconds: r.DurationSeconds}
		if r.Cached {
			var stamp gobuild.Record
			if data, err := os.ReadFile(filepath.Join(r.OutDir, "gobuild.json")); err == nil && json.Unmarshal(data, &stamp) == nil {
				b.BuiltSeconds = stamp.DurationSeconds
			}
		}
		out = append(out, b)
	})
	// A cached node image's own build time is that of the last fresh build with its key.
	builtIn := map[string]float64{}
	readLines(filepath.Join(root, "image-builds.jsonl"), func(line []byte) {
		var r struct {
			Name     string    `json:"name"`
			Key      string    `json:"key"`
			Cached   bool      `json:"cached"`
			Seconds  float64   `json:"duration_seconds"`
			Finished time.Time `json:"finished_at"`
			PID      int       `json:"pid"`
		}
		if json.Unmarshal(line, &r) != nil {
			return
		}
		if !r.Cached {
			builtIn[r.Name+" "+r.Key] = r.Seconds
		}
		if r.Finished.Before(t) || r.PID != 0 && r.PID != os.Getpid() {
			return
		}
		out = append(out, Build{Name: r.Name, Cached: r.Cached, Seconds: r.Seconds, BuiltSeconds: builtIn[r.Name+" "+r.Key]})
	})
	return out
}

func readLines(path string, fn func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		fn(sc.Bytes())
	}
}

// SelectLabs picks labs from the registry by a comma-separated list of
// names, in the list's order; "" selects force and finalizer, the two labs
// that need no kubelet stopped and finish in seconds.
func SelectLabs(all []lab.Definition, list string) ([]lab.Definition, error) {
	if strings.TrimSpace(list) == "" {
		list = DefaultLabs
	}
	return lab.Select(all, list)
}

// DefaultLabs are the labs of a matrix without -labs.
const DefaultLabs = "force,finalizer"

// readSummary reads a run folder's summary.json.
func readSummary(path string) (report.Summary, error) {
	var s report.Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}
