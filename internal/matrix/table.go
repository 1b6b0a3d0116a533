package matrix

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/termlab/termlab/internal/claims"
	"github.com/termlab/termlab/internal/report"
)

// Column is one Kubernetes release of the matrix: where its cluster came
// from, how long it took, and its lab runs.
type Column struct {
	Version       string `json:"version"`                  // as requested: v1.36.3
	Cluster       string `json:"cluster,omitempty"`        // kind cluster name
	Server        string `json:"server_version,omitempty"` // what its API server said
	NodeImage     string `json:"node_image,omitempty"`
	NodeImageFrom string `json:"node_image_source,omitempty"` // official or built
	// NodeImageDigest is an official node image's registry digest (checked
	// against its pin: internal/images).
	NodeImageDigest string  `json:"node_image_digest,omitempty"`
	Kwok            string  `json:"kwok,omitempty"` // "" when the selected labs need no fake node
	ImagesSeconds   float64 `json:"images_seconds"` // resolving/building the images (cached: seconds)
	// Builds are the builds of the release's images: what was built now and what came from the cache.
	Builds         []Build  `json:"builds,omitempty"`
	ClusterSeconds float64  `json:"cluster_seconds"` // kind create (or reuse) to every node Ready, kwok included
	LabsSeconds    float64  `json:"labs_seconds"`
	DeleteSeconds  float64  `json:"delete_seconds,omitempty"`
	Kept           bool     `json:"kept,omitempty"` // -keep: the cluster was left running
	Labs           []LabRun `json:"labs"`
	// Error says why the release could not be measured (build, cluster); its cells are "not run".
	Error string `json:"error,omitempty"`
}

// Build is one cached or fresh build behind a column's node image.
type Build struct {
	Name    string  `json:"name"` // kubernetes, etcd, coredns, crictl, node-image
	Version string  `json:"version,omitempty"`
	Cached  bool    `json:"cached"`
	Seconds float64 `json:"seconds"` // this call's time
	// BuiltSeconds is how long the build that made the cached result took.
	BuiltSeconds float64 `json:"built_seconds,omitempty"`
}

// LabRun is one lab run in a column.
type LabRun struct {
	Lab     string   `json:"lab"`
	RunID   string   `json:"run_id,omitempty"`
	Verdict string   `json:"verdict"`
	Seconds float64  `json:"seconds"`
	Dir     string   `json:"dir,omitempty"` // the run folder, relative to the matrix folder
	Errors  []string `json:"errors,omitempty"`
}

// VersionRun is a column and the summaries of its lab runs.
type VersionRun struct {
	Column
	Summaries []report.Summary
}

// Cell is one claim at one release.
type Cell struct {
	Verdict string `json:"verdict"`            // pass, fail, or "not run"
	Value   string `json:"deciding,omitempty"` // the deciding observed values
	Reason  string `json:"reason,omitempty"`   // why it failed
	Flag    string `json:"flag,omitempty"`     // against the claim's version expectation
}

// Row is one claim across the releases.
type Row struct {
	Claim     string `json:"claim"`
	Lab       string `json:"lab"`
	Statement string `json:"statement"`
	// Expected is the claim's version expectation in words ("" when it declares none).
	Expected string `json:"expected,omitempty"`
	Cells    []Cell `json:"cells"` // one per column, in column order
	// Changed: the verdict or an expectation's value differs between releases.
	Changed bool `json:"changed,omitempty"`
}

// Table is the matrix: claims × releases.
type Table struct {
	Format   string    `json:"format"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Labs     []string  `json:"labs"`
	Columns  []Column  `json:"columns"`
	Rows     []Row     `json:"rows"`
	// Flags list every flagged cell and every unexpected change, for the reader who reads one list.
	Flags []string `json:"flags,omitempty"`
}

// TableFormat versions matrix.json.
const TableFormat = "termlab-matrix/1"

// NotRun is the verdict of a claim a release did not decide.
const NotRun = "not run"

// BuildTable makes the table from each release's summaries (pure). Rows are
// the claims in the order the labs decided them; a claim missing at one
// release is "not run" there. A cell is flagged when its claim declares a
// version expectation (exp, usually Expectations) that its value does not
// meet; a row whose verdicts differ between releases without a declared
// expectation is flagged as an unexpected change.
func BuildTable(runs []VersionRun, exp map[string]Expectation) Table {
	t := Table{Format: TableFormat}
	index := map[string]int{}
	labSeen := map[string]bool{}
	for ci, run := range runs {
		t.Columns = append(t.Columns, run.Column)
		for _, s := range run.Summaries {
			if !labSeen[s.Lab] {
				labSeen[s.Lab] = true
				t.Labs = append(t.Labs, s.Lab)
			}
			for _, c := range normalised(s.Claims) {
				i, ok := index[c.ID]
				if !ok {
					i = len(t.Rows)
					index[c.ID] = i
					row := Row{Claim: c.ID, Lab: s.Lab, Statement: c.Statement, Cells: make([]Cell, len(runs))}
					for k := range row.Cells {
						row.Cells[k].Verdict = NotRun
					}
					if e, ok := exp[c.ID]; ok {
						row.Expected = e.Range() + ": " + e.Behaviour
					}
					t.Rows = append(t.Rows, row)
				}
				e, hasExp := exp[c.ID]
				extra := []string{}
				if hasExp {
					extra = append(extra, e.Key)
				}
				cell := Cell{Verdict: string(c.Verdict), Value: Deciding(c, extra...)}
				if !c.Passed() {
					cell.Reason = c.Reason
				}
				if hasExp {
					cell.Flag = e.Judge(run.Version, c)
				}
				t.Rows[i].Cells[ci] = cell
			}
		}
	}
	for i := range t.Rows {
		row := &t.Rows[i]
		e, hasExp := exp[row.Claim]
		verdicts := map[string]bool{}
		values := map[string]bool{}
		for ci, c := range row.Cells {
			if c.Flag != "" {
				t.Flags = append(t.Flags, fmt.Sprintf("%s at %s: %s", row.Claim, t.Columns[ci].Version, c.Flag))
			}
			if c.Verdict == NotRun {
				continue
			}
			verdicts[c.Verdict] = true
			if hasExp {
				values[expValue(c.Value, e.Key)] = true
			}
		}
		row.Changed = len(verdicts) > 1 || len(values) > 1
		if len(verdicts) > 1 && !hasExp {
			t.Flags = append(t.Flags, fmt.Sprintf("%s: %s between releases, and the claim declares no version expectation", row.Claim, describe(row.Cells, t.Columns)))
		}
	}
	return t
}

// normalised gives the claims as summary.json has them (observed values
// through JSON: numbers float64, typed strings plain), so a table from a
// live run and one from recorded summaries are the same.
func normalised(cs []claims.Claim) []claims.Claim {
	b, err := json.Marshal(cs)
	if err != nil {
		return cs
	}
	var out []claims.Claim
	if json.Unmarshal(b, &out) != nil {
		return cs
	}
	return out
}

func expValue(deciding, key string) string {
	for _, p := range strings.Split(deciding, "; ") {
		if v, ok := strings.CutPrefix(p, key+"="); ok {
			return v
		}
	}
	return ""
}

func describe(cells []Cell, cols []Column) string {
	var parts []string
	for i, c := range cells {
		parts = append(parts, cols[i].Version+" "+c.Verdict)
	}
	return strings.Join(parts, ", ")
}

// Markdown renders matrix.md: the table first, then each release's
// provenance and times, then the flags and the claims' statements.
func (t Table) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Version matrix\n\n")
	var vs []string
	for _, c := range t.Columns {
		vs = append(vs, c.Version)
	}
	p("Labs %s on Kubernetes %s, %s – %s UTC.\n\n", strings.Join(t.Labs, ", "), strings.Join(vs, ", "),
		t.Started.UTC().Format("2006-01-02 15:04:05"), t.Finished.UTC().Format("15:04:05"))
	switch n := len(t.Flags); n {
	case 0:
		p("**No flags**: every claim with a version expectation met it, and no verdict changed between releases.\n\n")
	default:
		p("**%d flag(s)**, listed under [Flags](#flags).\n\n", n)
	}
	p("| claim |")
	for _, c := range t.Columns {
		p(" %s |", c.Version)
	}
	p("\n| --- |")
	for range t.Columns {
		p(" --- |")
	}
	p("\n")
	for _, r := range t.Rows {
		name := "`" + r.Claim + "`"
		if r.Expected != "" {
			name += " ⓥ"
		}
		p("| %s |", name)
		for _, c := range r.Cells {
			p(" %s |", cellText(c))
		}
		p("\n")
	}
	p("\nEach cell: the verdict and the observed values that decide it. ⓥ: the claim declares a version expectation; ⚑: a value against it.\n")

	p("\n## Releases\n\n| release | cluster | server | node image | kwok | images | cluster up | labs | deleted |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range t.Columns {
		kwok := c.Kwok
		if kwok == "" {
			kwok = "not installed"
		}
		deleted := secs(c.DeleteSeconds)
		if c.Kept {
			deleted = "kept (-keep)"
		}
		p("| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s |\n", c.Version, c.Cluster, c.Server, c.NodeImage, c.NodeImageFrom, kwok,
			secs(c.ImagesSeconds), secs(c.ClusterSeconds), secs(c.LabsSeconds), deleted)
	}
	for _, c := range t.Columns {
		if c.Error != "" {
			p("\n**%s could not be measured**: %s\n", c.Version, c.Error)
		}
		if len(c.Builds) > 0 {
			p("\nBuilds for %s: ", c.Version)
			var parts []string
			for _, bd := range c.Builds {
				s := fmt.Sprintf("%s %s ", bd.Name, bd.Version)
				switch {
				case bd.Cached && bd.BuiltSeconds > 0:
					s += fmt.Sprintf("cached (built in %s)", secs(bd.BuiltSeconds))
				case bd.Cached:
					s += "cached"
				default:
					s += "built in " + secs(bd.Seconds)
				}
				parts = append(parts, strings.TrimSpace(strings.ReplaceAll(s, "  ", " ")))
			}
			p("%s.\n", strings.Join(parts, ", "))
		}
		if len(c.Labs) > 0 {
			p("\nLab runs on %s: ", c.Version)
			var parts []string
			for _, l := range c.Labs {
				s := fmt.Sprintf("lab:%s %s in %s", l.Lab, l.Verdict, secs(l.Seconds))
				if l.Dir != "" {
					s += fmt.Sprintf(" ([report](%s/report.md))", l.Dir)
				}
				if len(l.Errors) > 0 {
					s += " — " + strings.Join(l.Errors, "; ")
				}
				parts = append(parts, s)
			}
			p("%s.\n", strings.Join(parts, ", "))
		}
	}

	p("\n## Flags\n\n")
	if len(t.Flags) == 0 {
		p("None.\n")
	}
	for _, f := range t.Flags {
		p("- %s\n", f)
	}
	if len(t.Flags) > 0 {
		p("\nEach lab ran once per release: before calling a flag a change of Kubernetes, run that release and lab again (`go tool mage matrix -k8s=<release> -labs=<lab>`) and read the run's report.\n")
	}
	p("\n## Claims\n\n")
	for _, r := range t.Rows {
		p("- `%s` (lab:%s): %s\n", r.Claim, r.Lab, r.Statement)
		if r.Expected != "" {
			p("  - version expectation %s\n", r.Expected)
		}
	}
	return b.String()
}

func cellText(c Cell) string {
	s := c.Verdict
	switch c.Verdict {
	case string(claims.Fail):
		s = "**FAIL**"
	case string(claims.NotChecked):
		s = "not checked"
	}
	if c.Value != "" {
		s += ": " + c.Value
	}
	if c.Reason != "" {
		s += " — " + shorten(c.Reason, 160)
	}
	if c.Flag != "" {
		s += " ⚑ " + c.Flag
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func secs(s float64) string {
	if s <= 0 {
		return "–"
	}
	d := time.Duration(s * float64(time.Second))
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%.1f s", s)
}

// JSON renders matrix.json.
func (t Table) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
