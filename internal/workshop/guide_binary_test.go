package workshop_test

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/termlab/termlab/internal/cli"
	"github.com/termlab/termlab/internal/workshop"
	"github.com/termlab/termlab/labs"
)

// termlabCommand is a command WORKSHOP.md has the participant type: the
// bundle's binary, a command and its flags.
var termlabCommand = regexp.MustCompile(`\./(?:termlab-workshop/)?termlab ([a-z][a-z:]*)((?: -{1,2}[a-z][a-z-]*(?:=[^\s` + "`" + `]+)?)*)`)

// The bundle ships cmd/termlab: every command and flag WORKSHOP.md (and its
// trainer notes) tells a participant to type must be one that binary takes,
// spelt as it documents them (no mage single-dash flags).
func TestWorkshopGuideNamesTheBinarysCommands(t *testing.T) {
	m := &workshop.Manifest{Platform: "linux/amd64"}
	guide := string(workshop.GuideText(m, "termlab-workshop.tar.gz", filepath.Join("..", ".."), labs.All))
	seen := map[string]bool{}
	for _, match := range termlabCommand.FindAllStringSubmatch(guide, -1) {
		command, flags := match[1], strings.Fields(match[2])
		for _, f := range flags {
			if !strings.HasPrefix(f, "--") {
				t.Errorf("WORKSHOP.md: %q spells %s as mage does; termlab takes --%s", match[0], f, strings.TrimLeft(f, "-"))
			}
		}
		key := command + " " + strings.Join(flags, " ")
		if seen[key] {
			continue
		}
		seen[key] = true
		var stderr strings.Builder
		args := append(append([]string{"termlab", command}, flags...), "--help")
		if code := cli.Run(context.Background(), args, io.Discard, &stderr); code != 0 {
			t.Errorf("WORKSHOP.md has %q, and termlab refuses it (exit %d): %s", match[0], code, stderr.String())
		}
	}
	for _, want := range []string{"cluster:up ", "workshop ", "workshop:load ", "workshop:reset ", "results:compare ", "lab:force --by=you"} {
		found := false
		for k := range seen {
			found = found || strings.HasPrefix(k, want) || k == strings.TrimSpace(want)
		}
		if !found {
			t.Errorf("no `./termlab %s` found in WORKSHOP.md (the pattern is broken?); found %v", want, seen)
		}
	}
}
