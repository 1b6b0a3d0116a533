package resultsindex

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/termlab/termlab/internal/report"
)

// HTMLFile is the index a person opens in a browser, beside index.md: every
// run with its timeline inline. It is a plain file with relative links and
// no script, so it opens from the file system without a server.
const HTMLFile = "index.html"

type htmlRun struct {
	Entry
	Title, Verdict, VerdictClass, Started, Took, Claims, Kubernetes, NodeImage, Kwok string
	Errors                                                                           []string
	Timeline, Report, Summary                                                        string
	Answer                                                                           string
}

var page = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>termlab runs</title>
<style>
body { font-family: sans-serif; color: #1a1a1a; background: #ffffff; margin: 1.5rem auto; max-width: 1040px; padding: 0 1rem; line-height: 1.4; }
h1 { margin-bottom: 0.2rem; }
p.lead { color: #4d4d4d; margin-top: 0; }
section.run { border-top: 1px solid #8a8a8a; padding: 0.8rem 0 1.2rem; }
section.run h3 { margin: 0 0 0.3rem; }
.verdict { font-weight: bold; padding: 0 0.4em; border-radius: 3px; color: #ffffff; }
.pass { background: #2e7d32; } .fail { background: #c62828; } .partial { background: #8a5a00; } .incomplete { background: #595959; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 1rem; margin: 0.3rem 0 0.6rem; font-size: 0.92rem; }
dt { color: #4d4d4d; } dd { margin: 0; }
img.timeline { width: 100%; height: auto; border: 1px solid #8a8a8a; }
table.labs { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
table.labs td, table.labs th { border-top: 1px solid #8a8a8a; padding: 0.4rem 0.5rem; vertical-align: top; text-align: left; }
table.labs img.thumbnail { width: 300px; height: auto; border: 1px solid #8a8a8a; }
a { color: #0b57d0; }
</style>
</head>
<body>
<h1>termlab runs</h1>
<p class="lead">First each lab's latest run (its reference run until it has one), then every run folder under results/, newest first, then the committed reference runs. Each picture is the run's timeline: the API object against the container on the node, in seconds from the first delete. Regenerated after each run (<code>results:index</code>); the same in <a href="index.md">index.md</a>.</p>
{{with .Labs}}<h2>Each lab's latest run</h2>
<table class="labs" id="labs">
<tr><th>lab</th><th>verdict</th><th>answer</th><th>picture</th></tr>
{{range .}}<tr class="lab" data-lab="{{.Lab}}"><td><a href="#{{.Dir}}">{{.Title}}</a><br><small>{{.RunID}}{{if .Reference}} (reference){{end}}</small></td><td><span class="verdict {{.VerdictClass}}">{{.Verdict}}</span></td><td>{{.Answer}}{{if .Report}} <a href="{{.Report}}">report</a>{{end}}</td><td>{{if .Timeline}}<a href="{{.Timeline}}"><img class="thumbnail" src="{{.Timeline}}" alt="timeline of {{.Title}} run {{.RunID}}"></a>{{end}}</td></tr>
{{end}}</table>
{{end}}{{range $i, $group := .Groups}}{{if $group.Runs}}<h2>{{$group.Name}}</h2>
{{else if eq $i 0}}<h2>{{$group.Name}}</h2>
<p>No runs yet: <code>go tool mage lab:all</code> (or <code>termlab lab:all</code>) in a termlab checkout, <code>./termlab workshop</code> in a workshop bundle, runs every lab.</p>
{{end}}{{if $group.Runs}}{{range $group.Runs}}<section class="run" id="{{.Dir}}">
<h3>{{.Title}} <span class="verdict {{.VerdictClass}}">{{.Verdict}}</span></h3>
<dl>
<dt>run</dt><dd>{{.RunID}}{{if .Latest}} (latest){{end}}</dd>
{{if .Started}}<dt>started (UTC)</dt><dd>{{.Started}}{{if .Took}}, took {{.Took}}{{end}}</dd>
<dt>claims passed</dt><dd>{{.Claims}}</dd>
<dt>versions</dt><dd>Kubernetes {{.Kubernetes}}; node image {{.NodeImage}}{{if .Kwok}}; kwok {{.Kwok}}{{end}}</dd>{{end}}
{{if .Problem}}<dt>problem</dt><dd>{{.Problem}}</dd>{{end}}
{{range .Errors}}<dt>error</dt><dd>{{.}}</dd>{{end}}
<dt>files</dt><dd>{{if .Report}}<a href="{{.Report}}">report</a>{{else}}no report{{end}}{{if .Summary}} · <a href="{{.Summary}}">summary.json</a>{{end}}{{if .Timeline}} · <a href="{{.Timeline}}">timeline.svg</a>{{end}}</dd>
</dl>
{{if .Timeline}}<a href="{{.Timeline}}"><img class="timeline" src="{{.Timeline}}" alt="timeline of {{.Title}} run {{.RunID}}" onerror="console.error('missing image: ' + this.src)"></a>{{end}}
</section>
{{end}}{{end}}{{end}}</body>
</html>
`))

type htmlGroup struct {
	Name string
	Runs []htmlRun
}

// RenderHTML renders index.html; dir is the results folder, to see which
// files each run has.
func RenderHTML(dir string, entries []Entry) ([]byte, error) {
	groups := []htmlGroup{{Name: "Runs"}, {Name: "Reference runs"}}
	for _, e := range entries {
		r := htmlRunOf(dir, e)
		g := &groups[0]
		if e.Reference {
			g = &groups[1]
		}
		g.Runs = append(g.Runs, r)
	}
	var labs []htmlRun
	for _, e := range LatestPerLab(entries) {
		labs = append(labs, htmlRunOf(dir, e))
	}
	var b bytes.Buffer
	if err := page.Execute(&b, htmlPage{Labs: labs, Groups: groups}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// htmlPage is the first screen (one row per lab) and then every run.
type htmlPage struct {
	Labs   []htmlRun
	Groups []htmlGroup
}

func htmlRunOf(dir string, e Entry) htmlRun {
	r := htmlRun{Entry: e, Title: "lab:" + e.Lab, Verdict: "incomplete", VerdictClass: "incomplete"}
	has := func(name string) string {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.Dir), name)); err == nil {
			return e.Dir + "/" + name
		}
		return ""
	}
	r.Timeline, r.Report, r.Summary = has(report.TimelineFile), has(report.MarkdownFile), has(report.SummaryFile)
	if s := e.Summary; s != nil {
		passed := 0
		for _, c := range s.Claims {
			if c.Passed() {
				passed++
			}
		}
		r.Verdict, r.VerdictClass = strings.ToUpper(string(s.Verdict)), string(s.Verdict)
		r.Started, r.Took = s.StartedAt.UTC().Format("2006-01-02 15:04:05"), took(s)
		r.Claims = fmt.Sprintf("%d of %d", passed, len(s.Claims))
		v := s.Versions
		r.Kubernetes, r.NodeImage = v["kubernetes_server"], v["node_image"]
		if src := v["node_image_source"]; src != "" {
			r.NodeImage += " (" + src + ")"
		}
		r.Kwok = v["kwok"]
		if set := v["kwok_stage_set"]; set != "" {
			r.Kwok += ", stages " + set
		}
		r.Errors = s.Errors
		r.Answer = answerOf(e)
	}
	return r
}
