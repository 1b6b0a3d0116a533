package workshop

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/lab"
)

// Sections of labs/<lab>/README.md shown before a lab runs, in this order.
var guideSections = []string{"The question", "What the lab does", "What to watch for"}

// ReadmeSections splits a README into its "## " sections, by heading.
func ReadmeSections(md []byte) map[string]string {
	out := map[string]string{}
	var name string
	var body strings.Builder
	flush := func() {
		if name != "" {
			out[name] = strings.TrimSpace(body.String())
		}
		body.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			name = strings.TrimSpace(h)
			continue
		}
		if name != "" {
			body.WriteString(line + "\n")
		}
	}
	flush()
	return out
}

// labWorker is the real worker each lab uses (its README says which):
// finalizer and force the first, orphan the second. Other labs: the first.
var labWorker = map[string]int{"finalizer": 0, "force": 0, "orphan": 1}

// pod is a pod of a lab and where it runs.
type pod struct {
	name string
	fake bool
}

func labPods(def lab.Definition) []pod {
	var out []pod
	for _, m := range def.Manifests {
		p, _, err := lab.LoadManifest(m)
		if err != nil {
			continue
		}
		out = append(out, pod{name: p.Name, fake: p.Spec.NodeSelector["type"] == "kwok"})
	}
	return out
}

// Command is something a participant can type to see what the lab sees.
type Command struct {
	Cmd  string
	What string
}

// labCommands are shown before a lab: commands that follow it from a second
// terminal (the run's namespace is not known yet, so they select by label).
func labCommands(def lab.Definition, env *cluster.Env, k kubectl) []Command {
	sel := lab.LabLabel + "=" + def.Name
	var cmds []Command
	if k.local {
		cmds = append(cmds, Command{"export KUBECONFIG=" + env.KubeconfigPath, "the cluster's kubeconfig (your ~/.kube/config is not used)"})
	} else {
		cmds = append(cmds, Command{"alias kubectl='" + k.prefix + "'", "no kubectl here: the control-plane node has one (same version as the cluster)"})
	}
	cmds = append(cmds,
		Command{"kubectl get pods -A -l " + sel + " -o wide -w", "the lab's pods, live"},
		Command{"kubectl get pods -A -l " + sel + " -w -o custom-columns=POD:.metadata.name,DELETION:.metadata.deletionTimestamp,GRACE:.metadata.deletionGracePeriodSeconds,FINALIZERS:.metadata.finalizers,PHASE:.status.phase",
			"the fields deletion is about"})
	node := workerName(env, def.Name)
	for _, p := range labPods(def) {
		if p.fake {
			cmds = append(cmds, Command{"kubectl get pod -A -l " + sel + " --field-selector metadata.name=" + p.name + " -o yaml", p.name + " runs on a kwok fake node: no container, no crictl; only the API object"})
			continue
		}
		if node != "" {
			cmds = append(cmds, Command{"docker exec " + node + " crictl ps -a --label io.kubernetes.pod.name=" + p.name, p.name + "'s container as the node's runtime sees it"})
		}
	}
	if def.Name == "orphan" && node != "" {
		cmds = append(cmds,
			Command{"docker exec " + node + " systemctl is-active kubelet", "is the kubelet running on " + node + "?"},
			Command{"kubectl get nodes -w", "the node turning NotReady and Ready again"})
	}
	cmds = append(cmds, Command{"kubectl get events -A --field-selector involvedObject.kind=Pod -w", "the kubelet's own word (Killing, Started …)"})
	return cmds
}

// kubectl is how the commands shown reach the cluster: the local kubectl
// with the project's kubeconfig, or, when there is none (a participant with
// only Docker), the kubectl inside the control-plane node.
type kubectl struct {
	local  bool
	prefix string
}

func findKubectl(env *cluster.Env) kubectl {
	if _, err := exec.LookPath("kubectl"); err == nil || env == nil || env.ControlPlane == nil {
		return kubectl{local: true, prefix: "kubectl"}
	}
	return kubectl{prefix: "docker exec " + env.ControlPlane.String() + " kubectl --kubeconfig=/etc/kubernetes/admin.conf"}
}

func workerName(env *cluster.Env, labName string) string {
	if env == nil || len(env.Workers) == 0 {
		return ""
	}
	i := labWorker[labName]
	if i >= len(env.Workers) {
		i = 0
	}
	return env.Workers[i].String()
}

// stepHints are the commands shown under a step of a running lab, chosen by
// what the step's name says it does. {ns}, {pod} and {node} are the run's.
var stepHints = []struct {
	match string
	cmds  []string
}{
	{"create pod", []string{"kubectl get pod {pod} -n {ns} -o wide -w"}},
	{"remove the finalizer", []string{"kubectl get pod {pod} -n {ns} -w", "kubectl get pod {pod} -n {ns} -o jsonpath='{.metadata.finalizers}'"}},
	{"delete", []string{"kubectl get pod {pod} -n {ns} -o jsonpath='{.metadata.deletionTimestamp} grace={.metadata.deletionGracePeriodSeconds} finalizers={.metadata.finalizers} phase={.status.phase}{\"\\n\"}'"}},
	{"stop only the kubelet", []string{"docker exec {node} systemctl is-active kubelet", "docker exec {node} crictl ps --label io.kubernetes.pod.name={pod}"}},
	{"notready", []string{"kubectl get node {node} -w"}},
	{"ready again", []string{"kubectl get node {node} -w"}},
	{"start the kubelet", []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"}},
	{"container", []string{"docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}", "docker exec {node} crictl logs --tail 3 $(docker exec {node} crictl ps -aq --label io.kubernetes.pod.name={pod} | head -1)"}},
}

var runIDPattern = regexp.MustCompile(`lab:(\S+) run (\d{8}-\d{6}-[0-9a-f]{4}): results in`)

// annotator sits between a lab's progress logger and the terminal: under
// every step a lab starts ("▶ <step> ...") it prints the commands a
// participant could type to see the same thing. It never waits: a pause
// inside a lab would change what the lab measures (see Session).
type annotator struct {
	mu    sync.Mutex
	out   io.Writer
	buf   []byte
	env   *cluster.Env
	pods  []string // the lab's pods on real nodes and fake ones, longest name first
	nodes []string // real node names, longest first
	ns    string
	pod   string
	node  string
	fake  map[string]bool
}

func newAnnotator(out io.Writer, env *cluster.Env, def lab.Definition) *annotator {
	a := &annotator{out: out, env: env, fake: map[string]bool{}, node: workerName(env, def.Name)}
	for _, p := range labPods(def) {
		a.pods = append(a.pods, p.name)
		a.fake[p.name] = p.fake
	}
	if env != nil {
		for _, w := range env.Workers {
			a.nodes = append(a.nodes, w.String())
		}
	}
	byLen := func(s []string) { sort.Slice(s, func(i, j int) bool { return len(s[i]) > len(s[j]) }) }
	byLen(a.pods)
	byLen(a.nodes)
	if len(a.pods) > 0 {
		a.pod = a.pods[len(a.pods)-1]
	}
	return a
}

func (a *annotator) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf = append(a.buf, p...)
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		line := string(a.buf[:i+1])
		a.buf = a.buf[i+1:]
		if _, err := io.WriteString(a.out, line); err != nil {
			return len(p), err
		}
		for _, h := range a.hints(line) {
			fmt.Fprintf(a.out, "           ⌨  %s\n", h)
		}
	}
	return len(p), nil
}

func (a *annotator) hints(line string) []string {
	if m := runIDPattern.FindStringSubmatch(line); m != nil {
		a.ns = "termlab-" + m[1] + "-" + m[2]
		return []string{"the run's namespace is " + a.ns + ": kubectl get all,events -n " + a.ns}
	}
	_, step, ok := strings.Cut(line, "▶ ")
	if !ok || a.ns == "" {
		return nil
	}
	step = strings.TrimSuffix(strings.TrimSpace(step), " ...")
	for _, p := range a.pods {
		if strings.Contains(step, p) {
			a.pod = p
			break
		}
	}
	for _, n := range a.nodes {
		if strings.Contains(step, n) {
			a.node = n
			break
		}
	}
	lower := strings.ToLower(step)
	if strings.Contains(lower, "cleanup") {
		return nil
	}
	for _, h := range stepHints {
		if !strings.Contains(lower, h.match) {
			continue
		}
		var out []string
		for _, c := range h.cmds {
			if a.fake[a.pod] && strings.Contains(c, "{node}") {
				continue // no container on a fake node
			}
			out = append(out, strings.NewReplacer("{ns}", a.ns, "{pod}", a.pod, "{node}", a.node).Replace(c))
		}
		if a.fake[a.pod] && strings.Contains(lower, "create pod") {
			out = append(out, "("+a.pod+" is on a kwok fake node: kwok's stages play it, there is no container to look at)")
		}
		return out
	}
	return nil
}

// printLabIntro shows the lab's README sections and the commands to follow it.
func printLabIntro(w io.Writer, root string, n, of int, def lab.Definition, env *cluster.Env, k kubectl) {
	title := fmt.Sprintf(" lab %d of %d: %s ", n, of, def.Title())
	bar := strings.Repeat("═", max(4, 72-len([]rune(title))))
	fmt.Fprintf(w, "\n══%s%s\n\n", title, bar)
	readme := root + "/labs/" + def.Name + "/README.md"
	md, err := os.ReadFile(readme)
	if err != nil {
		fmt.Fprintf(w, "%s\n\n(no %s: %v)\n\n", def.Question, readme, err)
	} else {
		secs := ReadmeSections(md)
		for _, s := range guideSections {
			if body := secs[s]; body != "" {
				fmt.Fprintf(w, "── %s\n\n%s\n\n", s, indent(body, "   "))
			}
		}
		fmt.Fprintf(w, "   (all of it: %s)\n\n", readme)
	}
	fmt.Fprintf(w, "── Follow along in a second terminal\n\n")
	for _, c := range labCommands(def, env, k) {
		fmt.Fprintf(w, "   %s\n       # %s\n", c.Cmd, c.What)
	}
	fmt.Fprintln(w)
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
