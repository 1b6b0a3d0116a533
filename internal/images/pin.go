package images

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/termlab/termlab/internal/flock"
	"github.com/termlab/termlab/internal/progress"
	"github.com/termlab/termlab/internal/project"
)

// Trust on first use for the official images termlab takes by tag (the kwok
// image, kindest/node:<release>). The machines termlab is developed on reach
// no registry, so no digest can be learnt and written into the code, and a
// wrong one would break every laptop. Instead the first use records the
// digest the registry gave, and every later use checks that the tag still
// names that image: a tag moved in the registry, or something else answering
// for it, is refused instead of run.

// PinFile, in termlab's cache dir (project.CacheDir), holds one line per
// image taken by tag: "<reference> <digest>". Deleting a line trusts the
// image the tag names at the next use.
const PinFile = "image-pins.txt"

const pinFileHeader = `# termlab: the digest each official image had when termlab first used it by tag.
# Every later use checks that the tag still names that image and refuses otherwise.
# Delete a line to trust whatever the tag names at the next use.
`

// pinFacts are what decidePin reads about one image taken by tag.
type pinFacts struct {
	// Pinned is the digest recorded at the image's first use ("" when none).
	Pinned string
	// Present are the image's digests in the tag's repository (docker's
	// RepoDigests for it), sorted; none for an image loaded with `docker load`
	// or built here.
	Present []string
}

// pinVerdict is what to do about one image taken by tag.
type pinVerdict string

const (
	pinHolds  pinVerdict = "holds"  // the image is the pinned one
	pinTrust  pinVerdict = "trust"  // first use: record the image's digest
	pinRefuse pinVerdict = "refuse" // the tag now names another image
	// An image with no repository digest came from no registry (docker
	// records one at every pull): it was loaded or built on this machine, the
	// user's own doing, so there is nothing to record and nothing a registry
	// could have swapped.
	pinNoDigest    pinVerdict = "no-digest"   // not pinned, nothing to pin
	pinUncheckable pinVerdict = "uncheckable" // pinned, but nothing to compare the pin with
)

// pinDecision is decidePin's answer: the verdict and the digest the image is
// used at ("" when it has none).
type pinDecision struct {
	Verdict pinVerdict
	Digest  string
}

// decidePin decides from the facts alone; checkPin gathers them and acts.
func decidePin(f pinFacts) pinDecision {
	switch {
	case len(f.Present) == 0 && f.Pinned == "":
		return pinDecision{Verdict: pinNoDigest}
	case len(f.Present) == 0:
		return pinDecision{Verdict: pinUncheckable}
	case f.Pinned == "":
		// Docker lists one digest per repository unless the same image was
		// pushed there under several manifests: the first, for a stable pin.
		return pinDecision{Verdict: pinTrust, Digest: f.Present[0]}
	case slices.Contains(f.Present, f.Pinned):
		return pinDecision{Verdict: pinHolds, Digest: f.Pinned}
	default:
		return pinDecision{Verdict: pinRefuse}
	}
}

// splitRef splits an image reference into its repository and the digest it
// names ("" for a reference by tag alone): registry.k8s.io/kwok/kwok:v0.8.0
// is registry.k8s.io/kwok/kwok; a port is not a tag.
func splitRef(ref string) (repo, digest string) {
	if at := strings.IndexByte(ref, '@'); at >= 0 {
		ref, digest = ref[:at], ref[at+1:]
	}
	if colon := strings.LastIndexByte(ref, ':'); colon > strings.LastIndexByte(ref, '/') {
		ref = ref[:colon]
	}
	return ref, digest
}

// familiarRepo spells a Docker Hub repository as docker prints it in
// RepoDigests (kindest/node, busybox), any other as it is. As in docker, a
// first component with a dot or a colon, or localhost, is a registry host.
func familiarRepo(repo string) string {
	host, rest, ok := strings.Cut(repo, "/")
	if ok && (strings.ContainsAny(host, ".:") || host == "localhost") {
		if host != "docker.io" && host != "index.docker.io" {
			return repo
		}
		repo = rest
	}
	return strings.TrimPrefix(repo, "library/")
}

// digestsIn picks, from docker's RepoDigests of an image, its digests in
// repository repo, sorted.
func digestsIn(repo string, repoDigests []string) []string {
	var out []string
	for _, rd := range repoDigests {
		name, digest, ok := strings.Cut(rd, "@")
		if ok && familiarRepo(name) == familiarRepo(repo) {
			out = append(out, digest)
		}
	}
	slices.Sort(out)
	return out
}

// pinFile is the pin file at path. Reads and writes take its lock: the node
// and kwok images resolve at once, and two termlab runs may as well.
type pinFile struct{ path string }

// defaultPins is PinFile in termlab's cache dir.
func defaultPins() pinFile { return pinFile{filepath.Join(project.CacheDir(), PinFile)} }

// pinMu orders this process's goroutines: flock lets a process re-enter
// its own lock, so it only keeps other processes out.
var pinMu sync.Mutex

// checkPin checks an official image present in docker (with the given
// RepoDigests) against its pin, recording one at its first use, and returns
// the digest it is used at ("" when it has none). A reference by digest
// (kind's default node image) is pinned by the reference itself.
func checkPin(ctx context.Context, log *progress.Logger, pins pinFile, ref string, repoDigests []string) (string, error) {
	repo, digest := splitRef(ref)
	if digest != "" {
		return digest, nil
	}
	pinMu.Lock()
	defer pinMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(pins.path), 0o755); err != nil {
		return "", fmt.Errorf("image pins: %w", err)
	}
	unlock, err := flock.Acquire(ctx, pins.path+".lock", nil)
	if err != nil {
		return "", fmt.Errorf("image pins: %w", err)
	}
	defer unlock()
	pinned, err := pins.read()
	if err != nil {
		return "", err
	}
	facts := pinFacts{Pinned: pinned[ref], Present: digestsIn(repo, repoDigests)}
	d := decidePin(facts)
	switch d.Verdict {
	case pinTrust:
		if err := pins.add(ref, d.Digest); err != nil {
			return "", err
		}
		log.Infof("%s: trusted at its first use as %s (pinned in %s; later uses must match)", ref, d.Digest, pins.path)
	case pinNoDigest:
		log.Infof("%s has no repository digest (loaded with docker load or built here): not pinned", ref)
	case pinUncheckable:
		log.Infof("%s has no repository digest (loaded with docker load or built here): its pin %s is not checked", ref, facts.Pinned)
	case pinRefuse:
		return "", pins.refusal(ref, repo, facts)
	}
	return d.Digest, nil
}

// refusal says which image changed, both digests, and the two ways on.
func (p pinFile) refusal(ref, repo string, f pinFacts) error {
	byDigest := repo + "@" + f.Pinned
	return fmt.Errorf("image %s is not the one termlab trusted at its first use: it is %s now, the pin in %s says %s. "+
		"The tag was moved in the registry, or something else answered for it. "+
		"To go on with the pinned image: `docker pull %s && docker tag %s %s`. "+
		"To trust the new image instead, delete the line %q from %s",
		ref, strings.Join(f.Present, ", "), p.path, f.Pinned, byDigest, byDigest, ref, ref+" "+f.Pinned, p.path)
}

// read returns the pins by reference; a missing file holds none.
func (p pinFile) read() (map[string]string, error) {
	pinned := map[string]string{}
	f, err := os.Open(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return pinned, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading image pins: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"<image reference> <digest>\", got %q: mend the line or delete it (the image is trusted again at its next use)", p.path, n, line)
		}
		pinned[fields[0]] = fields[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading image pins: %w", err)
	}
	return pinned, nil
}

// add appends one pin, starting the file with its header.
func (p pinFile) add(ref, digest string) error {
	f, err := os.OpenFile(p.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("recording the pin of %s: %w", ref, err)
	}
	line := ref + " " + digest + "\n"
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		line = pinFileHeader + line
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording the pin of %s in %s: %w", ref, p.path, err)
	}
	return nil
}
