package workshop

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/termlab/termlab/internal/cluster"
	"github.com/termlab/termlab/internal/evidence"
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
	node := workerName(env, def)
	for _, p := range labPods(def) {
		if p.fake {
			cmds = append(cmds, Command{"kubectl get pod -A -l " + sel + " --field-selector metadata.name=" + p.name + " -o yaml", p.name + " runs on a kwok fake node: no container, no crictl; only the API object"})
			continue
		}
		if node != "" {
			cmds = append(cmds, Command{"docker exec " + node + " crictl ps -a --label io.kubernetes.pod.name=" + p.name, p.name + "'s container as the node's runtime sees it"})
		}
	}
	if _, stops := lab.Declared[lab.KubeletStop](def.Uses); stops && node != "" {
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

// workerName is the real worker the lab's real pods run on (Definition.Uses).
func workerName(env *cluster.Env, def lab.Definition) string {
	if env == nil || len(env.Workers) == 0 {
		return ""
	}
	i := def.Uses.Worker
	if i >= len(env.Workers) {
		i = 0
	}
	return env.Workers[i].String()
}

// deletionFields shows the fields deletion is about.
const deletionFields = "kubectl get pod {pod} -n {ns} -o jsonpath='{.metadata.deletionTimestamp} grace={.metadata.deletionGracePeriodSeconds} finalizers={.metadata.finalizers} phase={.status.phase}{\"\\n\"}'"

// actionHints are the commands shown under each action a lab sends, by the
// action's kind: what a participant can type to see its effect. {ns}, {pod}
// and {node} are the run's namespace, the pod acted on and the lab's worker.
var actionHints = map[evidence.ActionKind][]string{
	evidence.ActionCreate:           {"kubectl get pod {pod} -n {ns} -o wide -w"},
	evidence.ActionDelete:           {deletionFields, "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"},
	evidence.ActionForceDelete:      {deletionFields, "docker exec {node} crictl ps -a --label io.kubernetes.pod.name={pod}"},
	evidence.ActionRemoveFinalizers: {"kubectl get pod {pod} -n {ns} -w"},
	evidence.ActionStopKubelet:      {"docker exec {node} systemctl is-active kubelet", "docker exec {node} crictl ps --label io.kubernetes.pod.namespace={ns}", "kubectl get node {node} -w"},
	evidence.ActionStartKubelet:     {"docker exec {node} crictl ps -a --label io.kubernetes.pod.namespace={ns}", "kubectl get node {node} -w"},
}

// guide follows a running lab through its events (lab.Options.Events) and
// prints, under each action the lab sends, the commands a participant could
// type to see the same thing. It never waits: a pause inside a lab would
// change what the lab measures (see Session).
type guide struct {
	out  io.Writer
	node string
	fake map[string]bool
}

func newGuide(out io.Writer, env *cluster.Env, def lab.Definition) *guide {
	g := &guide{out: out, node: workerName(env, def), fake: map[string]bool{}}
	for _, p := range labPods(def) {
		g.fake[p.name] = p.fake
	}
	return g
}

// onEvent is the lab's lab.Options.Events.
func (g *guide) onEvent(e lab.Event) {
	for _, h := range g.hints(e) {
		fmt.Fprintf(g.out, "           ⌨  %s\n", h)
	}
}

func (g *guide) hints(e lab.Event) []string {
	switch e.Kind {
	case lab.RunStarted:
		return []string{"the run's namespace is " + e.Namespace + ": kubectl get all,events -n " + e.Namespace}
	case lab.ActionSent:
	default:
		return nil
	}
	a := e.Action
	if a == nil || a.Error != "" || strings.HasPrefix(string(a.Kind), "cleanup") {
		return nil
	}
	pod, node := a.Target, g.node
	if strings.HasSuffix(string(a.Kind), "-kubelet") {
		pod, node = "", a.Target
	}
	var out []string
	for _, c := range actionHints[a.Kind] {
		if g.fake[pod] && strings.Contains(c, "{node}") {
			continue // no container on a fake node
		}
		out = append(out, lab.Fill(c, e.Namespace, pod, node))
	}
	if g.fake[pod] && a.Kind == "create" {
		out = append(out, "("+pod+" is on a kwok fake node: kwok's stages play it, there is no container to look at)")
	}
	return out
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
