package gobuild

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// stripFlags drop the symbol table and DWARF, as Kubernetes' own non-debug builds do
// (hack/lib/golang.sh): the binaries go into images, nobody debugs them there.
var stripFlags = []string{"-s", "-w"}

// KubernetesCommands are the k8s.io/kubernetes commands a kind node image needs.
var KubernetesCommands = []string{
	"kubelet", "kubeadm", "kubectl",
	"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
}

// Kubernetes returns the recipe for KubernetesCommands at KubernetesVersion.
func Kubernetes(ctx context.Context) (Recipe, error) {
	return KubernetesAt(ctx, KubernetesVersion)
}

// KubernetesAt returns the recipe for KubernetesCommands at the given release
// (v1.<minor>.<patch>). k8s.io/kubernetes' go.mod replaces its staging modules
// with directories, so a module depending on it must replace them with their
// published versions itself; the list is read from that go.mod (downloaded
// through the module proxy if needed). The build date stamped is the release's
// time on the module proxy (KubernetesBuildDate for KubernetesVersion, so its
// recipe and cache key are the ones it always had).
func KubernetesAt(ctx context.Context, version string) (Recipe, error) {
	info, err := moduleDownload(ctx, "k8s.io/kubernetes", version)
	if err != nil {
		return Recipe{}, fmt.Errorf("gobuild: kubernetes %s recipe: %w", version, err)
	}
	reps, err := readReplaces(ctx, info.GoMod)
	if err != nil {
		return Recipe{}, fmt.Errorf("gobuild: kubernetes %s recipe: %w", version, err)
	}
	sv, err := stagingVersion(version)
	if err != nil {
		return Recipe{}, fmt.Errorf("gobuild: kubernetes recipe: %w", err)
	}
	replace, err := stagingReplaces(reps, sv)
	if err != nil {
		return Recipe{}, fmt.Errorf("gobuild: kubernetes %s recipe: %s: %w", version, info.GoMod, err)
	}
	if len(replace) == 0 {
		return Recipe{}, fmt.Errorf("gobuild: kubernetes %s recipe: %s has no replace block", version, info.GoMod)
	}
	buildDate := KubernetesBuildDate
	if version != KubernetesVersion {
		if buildDate, err = moduleTime(info); err != nil {
			return Recipe{}, fmt.Errorf("gobuild: kubernetes %s recipe: %w", version, err)
		}
	}
	return kubernetesRecipeAt(version, buildDate, replace), nil
}

func kubernetesRecipe(replace map[string]string) Recipe {
	return kubernetesRecipeAt(KubernetesVersion, KubernetesBuildDate, replace)
}

func kubernetesRecipeAt(version, buildDate string, replace map[string]string) Recipe {
	pkgs := make([]string, len(KubernetesCommands))
	for i, c := range KubernetesCommands {
		pkgs[i] = "k8s.io/kubernetes/cmd/" + c
	}
	return Recipe{
		Name:     "kubernetes",
		Version:  version,
		Require:  map[string]string{"k8s.io/kubernetes": version},
		Replace:  replace,
		Packages: pkgs,
		// As hack/lib/golang.sh builds release binaries.
		Tags:    []string{"selinux", "notest", "grpcnotrace"},
		LDFlags: LDFlags(stripFlags, kubernetesStamps(version, buildDate)...),
		Checks: []Check{
			// kind reads the version from kubeadm.
			{Binary: "kubeadm", Args: []string{"version", "-o", "short"}, Want: version},
			{Binary: "kubelet", Args: []string{"--version"}, Want: "Kubernetes " + version},
		},
	}
}

// kubernetesStamps sets the version in both packages Kubernetes reads it from,
// as hack/lib/version.sh does.
func kubernetesStamps(version, buildDate string) []Stamp {
	major, minor := "", ""
	if parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	return stampAll(
		[]string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"},
		[][2]string{
			{"gitVersion", version},
			{"gitMajor", major},
			{"gitMinor", minor},
			{"gitCommit", fixedCommit},
			{"gitTreeState", "clean"},
			{"buildDate", buildDate},
		})
}

// stagingVersion is the version Kubernetes publishes its staging modules at:
// v1.37.2 -> v0.37.2.
func stagingVersion(kubeVersion string) (string, error) {
	rest, ok := strings.CutPrefix(kubeVersion, "v1.")
	if !ok || strings.Count(rest, ".") < 1 {
		return "", fmt.Errorf("kubernetes version %q is not v1.<minor>.<patch>", kubeVersion)
	}
	return "v0." + rest, nil
}

// Etcd returns the recipe for the etcd server at EtcdVersion.
func Etcd() Recipe { return EtcdAt(EtcdVersion) }

// EtcdAt returns the recipe for the etcd server at version (v3.x.y). Its module's root package is a main
// calling etcdmain.Main, but `go build` would name that binary "server" (the path is
// go.etcd.io/etcd/server/v3), so the same two lines are generated as ./etcd.
func EtcdAt(version string) Recipe {
	return Recipe{
		Name:    "etcd",
		Version: version,
		Require: map[string]string{"go.etcd.io/etcd/server/v3": version},
		MainFiles: map[string]string{"etcd/main.go": generatedHeader + `
// Command etcd is the etcd server, as go.etcd.io/etcd/server/v3's own main.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
`},
		Packages: []string{"./etcd"},
		LDFlags:  LDFlags(stripFlags, Stamp{"go.etcd.io/etcd/api/v3/version", "GitSHA", fixedCommit[:7]}),
		Checks: []Check{
			{Binary: "etcd", Args: []string{"--version"}, Want: "etcd Version: " + strings.TrimPrefix(version, "v")},
		},
	}
}

const generatedHeader = "// Code generated by termlab internal/gobuild. DO NOT EDIT.\n"

// CoreDNSPlugins are the CoreDNS directives compiled in: those of kubeadm's default
// Corefile (cmd/kubeadm/app/phases/addons/dns/manifests.go), which kind uses, plus
// log and whoami for debugging.
var CoreDNSPlugins = []string{
	"errors", "health", "ready", "kubernetes", "prometheus", "forward",
	"cache", "loop", "reload", "loadbalance", "log", "whoami",
}

// corednsPluginPackage maps a directive to its package where the names differ
// (core/plugin/zplugin.go and plugin.cfg upstream).
var corednsPluginPackage = map[string]string{"prometheus": "metrics"}

// CoreDNS returns the recipe for CoreDNS at CoreDNSVersion with only CoreDNSPlugins.
func CoreDNS() Recipe { return CoreDNSAt(CoreDNSVersion) }

// CoreDNSAt returns the recipe for CoreDNS at version (v1.x.y) with only CoreDNSPlugins.
func CoreDNSAt(version string) Recipe {
	return Recipe{
		Name:      "coredns",
		Version:   version,
		Require:   map[string]string{"github.com/coredns/coredns": version},
		MainFiles: map[string]string{"coredns/main.go": corednsMain(CoreDNSPlugins)},
		Packages:  []string{"./coredns"},
		LDFlags:   LDFlags(stripFlags, Stamp{"github.com/coredns/coredns/coremain", "GitCommit", fixedCommit[:7]}),
		Checks: []Check{
			{Binary: "coredns", Args: []string{"-version"}, Want: "CoreDNS-" + strings.TrimPrefix(version, "v")},
			{Binary: "coredns", Args: []string{"-plugins"}, Want: "kubernetes"},
		},
	}
}

// corednsMain renders CoreDNS' main (coredns.go upstream) importing only the given
// plugins. Upstream's generated core/dnsserver/zdirectives.go orders all directives,
// and that order decides which plugin sees a query first. Rather than restate it, the
// generated init keeps upstream's list minus the plugins that are not registered:
// the imported ones plus those they pull in (forward brings dnstap, kubernetes
// brings transfer, ...), which stay usable in a Corefile.
func corednsMain(plugins []string) string {
	var imports, want []string
	for _, p := range plugins {
		pkg := p
		if alt, ok := corednsPluginPackage[p]; ok {
			pkg = alt
		}
		imports = append(imports, fmt.Sprintf("\t_ %q", "github.com/coredns/coredns/plugin/"+pkg))
		want = append(want, fmt.Sprintf("%q", p))
	}
	sort.Strings(imports)
	sort.Strings(want)
	return generatedHeader + `
// Command coredns is CoreDNS with only the plugins a kubeadm cluster's Corefile uses.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

` + strings.Join(imports, "\n") + `
)

// wanted are the directives of the plugins imported above.
var wanted = []string{` + strings.Join(want, ", ") + `}

func init() {
	registered := map[string]bool{}
	for _, name := range caddy.ListPlugins()["others"] {
		if d, ok := strings.CutPrefix(name, "dns."); ok {
			registered[d] = true
		}
	}
	var kept []string
	inKept := map[string]bool{}
	for _, d := range dnsserver.Directives {
		if registered[d] {
			kept = append(kept, d)
			inKept[d] = true
		}
	}
	for _, d := range wanted {
		if !inKept[d] {
			fmt.Fprintf(os.Stderr, "coredns: plugin %q is not both registered and in dnsserver.Directives (kept: %v)\n", d, kept)
			os.Exit(2)
		}
	}
	dnsserver.Directives = kept
}

func main() {
	coremain.Run()
}
`
}

// Crictl returns the recipe for crictl. Its Makefile stamps the version without the "v".
func Crictl() Recipe {
	return Recipe{
		Name:     "crictl",
		Version:  CrictlVersion,
		Require:  map[string]string{"sigs.k8s.io/cri-tools": CrictlVersion},
		Packages: []string{"sigs.k8s.io/cri-tools/cmd/crictl"},
		LDFlags:  LDFlags(stripFlags, Stamp{"sigs.k8s.io/cri-tools/pkg/version", "Version", strings.TrimPrefix(CrictlVersion, "v")}),
		Checks: []Check{
			{Binary: "crictl", Args: []string{"--version"}, Want: "crictl version " + strings.TrimPrefix(CrictlVersion, "v")},
		},
	}
}

// Kwok returns the recipe for the kwok controller (hack/releases.sh stamps the same vars).
func Kwok() Recipe {
	return Recipe{
		Name:     "kwok",
		Version:  KwokVersion,
		Require:  map[string]string{"sigs.k8s.io/kwok": KwokVersion},
		Packages: []string{"sigs.k8s.io/kwok/cmd/kwok"},
		LDFlags: LDFlags(stripFlags,
			Stamp{"sigs.k8s.io/kwok/pkg/consts", "Version", KwokVersion},
			Stamp{"sigs.k8s.io/kwok/pkg/consts", "PreRelease", "GA"}),
		Checks: []Check{
			{Binary: "kwok", Args: []string{"--version"}, Want: "kwok version " + KwokVersion},
		},
	}
}

// All returns every recipe the offline node image needs, Kubernetes first.
func All(ctx context.Context) ([]Recipe, error) {
	k, err := Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	return []Recipe{k, Etcd(), CoreDNS(), Crictl(), Kwok()}, nil
}
