package workshop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/termlab/termlab/internal/kwok"
	"github.com/termlab/termlab/internal/lab"
)

// Activate makes a standalone binary inside an unpacked bundle work from
// any directory: when TERMLAB_ROOT (or else the binary's own folder) is a
// bundle (it has manifest.json of this Format), it sets TERMLAB_ROOT to it,
// so internal/project finds manifests/ and results/ there, and points kwok at
// the bundle's kwok/module, so no Go module cache is asked. The images come
// from the bundle by themselves (internal/images sees images/images.json
// under the root). TERMLAB_KWOK_MODULE_DIR, if set, is used either way.
// Under `go tool mage` in a repository nothing changes. It returns the
// bundle root, or "" when not in a bundle.
func Activate() (string, error) {
	if d := os.Getenv(kwok.ModuleDirEnv); d != "" {
		if err := kwok.UseModuleDir(d); err != nil {
			return "", fmt.Errorf("%s=%s: %w", kwok.ModuleDirEnv, d, err)
		}
	}
	root := os.Getenv("TERMLAB_ROOT")
	if root == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", nil
		}
		if exe, err = filepath.EvalSymlinks(exe); err != nil {
			return "", nil
		}
		root = filepath.Dir(exe)
	}
	if !IsBundleRoot(root) {
		return "", nil
	}
	if os.Getenv("TERMLAB_ROOT") == "" {
		os.Setenv("TERMLAB_ROOT", root)
	}
	if os.Getenv(kwok.ModuleDirEnv) == "" {
		if err := kwok.UseModuleDir(filepath.Join(root, filepath.FromSlash(KwokModuleDir))); err != nil {
			return root, fmt.Errorf("the bundle in %s has no usable kwok sources (load it again with workshop:load): %w", root, err)
		}
	}
	return root, nil
}

// IsBundleRoot reports whether dir is an unpacked bundle.
func IsBundleRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return false
	}
	var m struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(b, &m) == nil && m.Format == Format
}

// ReadManifest reads an unpacked bundle's manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	return ParseManifest(b)
}

// guideText is WORKSHOP.md, the participant's how-to at the top of the bundle.
func guideText(m *Manifest, archiveName, root string, labs []lab.Definition) []byte {
	var b strings.Builder
	v := m.Versions
	fmt.Fprintf(&b, "# termlab workshop bundle\n\n")
	fmt.Fprintf(&b, "Made %s from termlab %s. Kubernetes %s (node image `%s`, %s), kwok %s, kind %s. Platform %s.\n\n",
		m.CreatedAt.Format("2006-01-02 15:04 UTC"), orDash(v["termlab"]), orDash(v["kubernetes"]), v["node_image"], orDash(v["node_image_from"]), orDash(v["kwok"]), orDash(v["kind"]), m.Platform)
	fmt.Fprintf(&b, "## You need\n\n- %s with a running Docker engine (Docker Desktop or dockerd), about %s of free disk for the images, 4 GiB of free memory.\n", m.Platform, MiB(imagesSize(m)*2))
	b.WriteString("- Nothing else: no Go, no network. Nothing is pulled, downloaded or built during the session.\n\n")
	fmt.Fprintf(&b, "## Load it (once per machine)\n\n```sh\ntar -xzf %s %s/%s     # the binary alone\n./%s/%s workshop:load %s   # verifies every digest first, then docker load + unpack\ncd %s\n```\n\n", archiveName, TopDir, BinaryFile, TopDir, BinaryFile, archiveName, TopDir)
	b.WriteString("A damaged or truncated file is refused before anything changes. `sha256sum -c " + archiveName + ".sha256` checks the whole file too.\n\n")
	b.WriteString("## The session\n\n```sh\n./termlab cluster:up          # a kind cluster: 1 control plane, 2 workers, kwok fake nodes\n./termlab workshop            # every lab in order, explained, waiting for Enter between labs (--unattended: not)\n./termlab results:compare     # your runs against the reference runs in results/reference/\n./termlab workshop:reset      # back to the start state (between sessions)\n./termlab cluster:down        # delete the cluster\n```\n\n")
	b.WriteString("## The labs\n\n| run it alone | what it shows |\n|---|---|\n")
	for _, d := range labs {
		fmt.Fprintf(&b, "| `./termlab %s` | %s |\n", d.Title(), d.Summary)
	}
	b.WriteString("\n`./termlab --help` lists every command.\n")
	b.WriteString("Your runs go to `results/<lab>/<run-id>/` (see results/README.md and results/index.md); each lab is explained in `labs/<lab>/README.md`.\n\n")
	b.WriteString(trainerNotes(root, labs))
	b.WriteString("## Versions\n\n| | |\n|---|---|\n")
	for _, k := range sortedKeys(v) {
		fmt.Fprintf(&b, "| %s | `%s` |\n", k, v[k])
	}
	b.WriteString("\n## Images\n\n| role | reference | image ID |\n|---|---|---|\n")
	ims := append([]Image(nil), m.Images...)
	sort.Slice(ims, func(i, j int) bool { return ims[i].Role < ims[j].Role })
	for _, im := range ims {
		fmt.Fprintf(&b, "| %s | `%s` (%s) | `%s` |\n", im.Role, im.Ref, im.From, im.ID)
	}
	return []byte(b.String())
}

func imagesSize(m *Manifest) int64 {
	var n int64
	for _, f := range m.Files {
		if f.IsImage() {
			n += f.Size
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
