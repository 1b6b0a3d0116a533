//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/project"
	"github.com/termlab/termlab/internal/report"
	"github.com/termlab/termlab/internal/resultsindex"
	"github.com/termlab/termlab/labs"
)

// TestResultsOpenInABrowser builds a results folder from the committed
// reference runs (their reports rendered again by this code), writes
// index.html and opens it and one report in headless Chromium from the file
// system: every link and image must resolve to a file, and the browser must
// log no console message (the page has no script; a missing image logs one).
// Screenshots go to results/screenshots/ (git-ignored) for a person to look at.
func TestResultsOpenInABrowser(t *testing.T) {
	browser := chromium(t)
	root, err := project.Root()
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	if err := os.CopyFS(filepath.Join(results, "reference"), os.DirFS(filepath.Join(root, "results", "reference"))); err != nil {
		t.Fatal(err)
	}
	for _, def := range labs.All {
		dir := filepath.Join(results, "reference", def.Name)
		if _, err := os.Stat(dir); err != nil {
			continue // a lab without a reference run yet
		}
		if err := labs.Rerender(dir); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := resultsindex.Write(results); err != nil {
		t.Fatal(err)
	}
	shots := filepath.Join(project.ResultsDir(root), "screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	index := filepath.Join(results, resultsindex.HTMLFile)
	dom := open(t, browser, index, "--dump-dom")
	refs := regexp.MustCompile(`(?:href|src)="([^"#]+)"`).FindAllStringSubmatch(dom, -1)
	images := strings.Count(dom, "<img ")
	if len(refs) == 0 || images == 0 {
		t.Fatalf("index.html has %d links and %d images; want every run with its timeline:\n%s", len(refs), images, dom)
	}
	for _, r := range refs {
		mustExist(t, results, r[1], "index.html")
	}
	// The first screen is one row per lab, before any full timeline.
	table, full := strings.Index(dom, `<table class="labs"`), strings.Index(dom, `<img class="timeline"`)
	if table < 0 || full < table {
		t.Errorf("index.html does not open with the lab table (at %d) before the first full timeline (at %d)", table, full)
	}
	for _, def := range labs.All {
		if _, err := os.Stat(filepath.Join(results, "reference", def.Name)); err == nil && !strings.Contains(dom, `data-lab="`+def.Name+`"`) {
			t.Errorf("the first screen has no row for lab:%s", def.Name)
		}
	}
	open(t, browser, index, "--screenshot="+filepath.Join(shots, "index-first-screen.png"), "--window-size=1100,900")
	open(t, browser, index, "--screenshot="+filepath.Join(shots, "index.png"), "--window-size=1100,3600")
	// Each lab's picture, as a person sees it.
	for _, def := range labs.All {
		svg := filepath.Join(results, "reference", def.Name, report.TimelineFile)
		if _, err := os.Stat(svg); err == nil {
			open(t, browser, svg, "--screenshot="+filepath.Join(shots, def.Name+"-timeline.png"), "--window-size=1000,760")
		}
	}

	// One report: report.md as the browser shows it, every link in it, its picture.
	run := filepath.Join(results, "reference", "force")
	md, err := os.ReadFile(filepath.Join(run, report.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if page := open(t, browser, filepath.Join(run, report.MarkdownFile), "--dump-dom"); !strings.Contains(page, "Answer from this run") {
		t.Errorf("the browser shows report.md without its answer:\n%.600s", page)
	}
	for _, r := range regexp.MustCompile(`\]\(([^)#]+)\)`).FindAllStringSubmatch(string(md), -1) {
		mustExist(t, run, r[1], "report.md")
	}
	t.Logf("screenshots in %s", shots)
}

func mustExist(t *testing.T, base, ref, page string) {
	t.Helper()
	if strings.Contains(ref, "://") {
		t.Errorf("%s links outside the results folder: %s", page, ref)
		return
	}
	if _, err := os.Stat(filepath.Join(base, filepath.FromSlash(ref))); err != nil {
		t.Errorf("%s has a broken link: %s (%v)", page, ref, err)
	}
}

// open loads a file in headless Chromium and returns what it printed; any
// console message fails the test.
func open(t *testing.T, browser, file string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, append([]string{"--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
		"--user-data-dir=" + t.TempDir()}, append(args, "file://"+file)...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Failed to load resource") {
			t.Errorf("%s: the browser logged: %s", filepath.Base(file), line)
		}
	}
	return stdout.String()
}

// chromium finds Debian's chromium, installing it with apt-get when it is
// missing (as root; the apt output goes to a log file).
func chromium(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Geteuid() != 0 {
		t.Fatal("chromium is missing and installing it needs root: apt-get install chromium")
	}
	log := filepath.Join(os.TempDir(), "termlab-chromium-apt.log")
	t.Logf("chromium is missing: installing Debian's chromium package with apt-get (log: %s)", log)
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "chromium"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Run(); err != nil {
			t.Fatalf("apt-get %s: %v (see %s)", strings.Join(args, " "), err, log)
		}
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("apt-get installed chromium, yet it is not on PATH: %v", err)
	}
	return p
}
