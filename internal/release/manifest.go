package release

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// manifestPlatform is one spec.platforms entry of a krew manifest.
type manifestPlatform struct {
	Selector struct {
		MatchLabels struct {
			OS   string `yaml:"os"`
			Arch string `yaml:"arch"`
		} `yaml:"matchLabels"`
	} `yaml:"selector"`
	URI    string `yaml:"uri"`
	SHA256 string `yaml:"sha256"`
	Bin    string `yaml:"bin"`
	Files  []struct {
		From string `yaml:"from"`
		To   string `yaml:"to"`
	} `yaml:"files"`
}

// generatedHeader replaces the template's header comment.
const generatedHeader = `krew plugin manifest for ` + "`kubectl termlab`" + ` %s (https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/),
written by go tool mage release (internal/release) from plugins/termlab.yaml.`

// Manifest fills the krew manifest template (plugins/termlab.yaml): its
// spec.version becomes v and its spec.platforms one entry per archive (the
// selector, <baseURL>/<archive>, its SHA-256, the binary and the files it
// holds); everything else (description, caveats, homepage) stays as the
// template says.
func Manifest(template []byte, v, baseURL string, arts []Artifact) ([]byte, error) {
	if len(arts) == 0 {
		return nil, fmt.Errorf("a manifest needs at least one archive")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(template, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", Template, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s: not one YAML document", Template)
	}
	root := doc.Content[0]
	spec := mapValue(root, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: no spec", Template)
	}
	version := mapValue(spec, "version")
	platforms := mapValue(spec, "platforms")
	if version == nil || platforms == nil {
		return nil, fmt.Errorf("%s: spec has no version or platforms", Template)
	}
	version.Value, version.Style, version.LineComment = v, 0, ""
	var ps []manifestPlatform
	for _, a := range arts {
		var p manifestPlatform
		p.Selector.MatchLabels.OS, p.Selector.MatchLabels.Arch = a.OS, a.Arch
		p.URI = strings.TrimSuffix(baseURL, "/") + "/" + a.Platform.Archive()
		p.SHA256 = a.SHA256
		p.Bin = a.Exe()
		for _, name := range append([]string{a.Exe()}, fileNames()...) {
			p.Files = append(p.Files, struct {
				From string `yaml:"from"`
				To   string `yaml:"to"`
			}{From: name, To: "."})
		}
		ps = append(ps, p)
	}
	var filled yaml.Node
	if err := filled.Encode(ps); err != nil {
		return nil, err
	}
	*platforms = filled
	// The template's header (on the document, the top mapping or its first
	// key, depending on blank lines) says it is a template: replaced.
	doc.HeadComment, root.HeadComment = fmt.Sprintf(generatedHeader, v), ""
	if len(root.Content) > 0 {
		root.Content[0].HeadComment = ""
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func fileNames() []string {
	var names []string
	for _, f := range Files {
		names = append(names, f.Name)
	}
	return names
}

// mapValue is the value node of key in mapping m (nil when absent).
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
