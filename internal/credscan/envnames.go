package credscan

import (
	"bytes"
	"regexp"
)

// secretNamedPattern is the name of the leak a secret-named value is.
const secretNamedPattern = "value of a secret-named variable"

// secretWords are the words that make a variable's name secret-named: a
// name containing PASSWORD, TOKEN or SECRET, or ending in _KEY.
var secretWords = []string{"password", "token", "secret", "_key"}

// secretNamed are the patterns of a secret-named value, one for each word
// (each is a literal the scan looks for, case-blind); secretNamedAt judges
// each place a word is found.
func secretNamed() []pattern {
	var out []pattern
	for _, w := range secretWords {
		out = append(out, pattern{name: secretNamedPattern, need: w, fold: true, at: secretNamedAt})
	}
	return out
}

// secretValue is a value as it follows its name: one character at least,
// and not a reference: not an object or a list ({, [: valueFrom,
// secretKeyRef), not a shell's $VAR or $(…), not a YAML block (|, >) or
// alias (*), not an escaped quote (\"), not an empty string ("").
const secretValue = `([^\s"'` + "`" + `,;{}\[\]\\$|>*#&][^\s"'` + "`" + `,;}\]\\]*)`

// The shapes a secret-named value takes: what follows the name (the value
// is the group), and what must come before it, if anything.
var secretShapes = []struct {
	before, after *regexp.Regexp
}{
	// DB_PASSWORD=hunter2 (a process's environment, a shell, a .env file),
	// "API_KEY":"abc" (JSON), GITHUB_TOKEN: ghp_… (YAML).
	{nil, regexp.MustCompile(`^["']?[ \t]*[=:][ \t]*["']?` + secretValue)},
	// {"name":"DB_PASSWORD","value":"x"}: a Kubernetes container's env in
	// JSON; {"key": "DB_PASSWORD", "value": "x"}: the CRI's (crictl
	// inspect's info.config.envs). A valueFrom in place of the value is a
	// reference, not a value.
	{regexp.MustCompile(`"(?:name|key)"\s*:\s*"$`), regexp.MustCompile(`^"\s*,\s*"value"\s*:\s*"` + secretValue)},
	// The same in YAML (sigs.k8s.io/yaml orders the keys: name, value):
	//   - name: DB_PASSWORD
	//     value: x
	{regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:name|key):[ \t]*["']?$`), regexp.MustCompile(`^["']?[ \t]*\r?\n[ \t]*value:[ \t]*["']?` + secretValue)},
}

// secretNamedAt reports whether the word found at b[i:j] is in the name of
// a variable with a value (one of secretShapes) that is secret-named: the
// name, the identifier the word is in, is written all in upper case
// (DB_PASSWORD, GITHUB_TOKEN, API_KEY) or all in lower case (db_password).
// Never camelCase: that is how Kubernetes spells its own fields (secretName,
// secretKeyRef, automountServiceAccountToken on every pod of every event),
// whose values name things and are no secret. In lower case a bare token or
// secret is a word of prose or a log's key (the kubelet logs
// secret="<namespace>/<name>"), so there it needs an underscore
// (github_token, client_secret, secret_key); a token field is a pattern of
// its own. Each test is a byte or two at the word's place, so a word found
// often (token) costs little.
func secretNamedAt(b []byte, i, j int) bool {
	upper := isUpper(b[j-1]) // every word ends in a letter
	in := func(c byte) bool {
		return c == '_' || '0' <= c && c <= '9' || upper && isUpper(c) || !upper && isLower(c)
	}
	for k := i; k < j; k++ {
		if !in(b[k]) {
			return false // mixed case: camelCase, or Password
		}
	}
	start, end := i, j
	for start > max(i-maxName, 0) && in(b[start-1]) {
		start--
	}
	for end < min(j+maxName, len(b)) && in(b[end]) {
		end++
	}
	if start > 0 && isIdent(b[start-1]) || end < len(b) && isIdent(b[end]) {
		return false // part of a longer, mixed-case identifier, or no name
	}
	name := b[start:end]
	word := b[i:j]
	switch {
	case bytes.EqualFold(word, []byte("_key")) && end != j:
		return false // _KEY must end the name (API_KEY, not API_KEY_ID)
	case !upper && (bytes.EqualFold(word, []byte("token")) || bytes.EqualFold(word, []byte("secret"))) && bytes.IndexByte(name, '_') < 0:
		return false
	case namesAPlace(name):
		return false
	}
	rest := b[end:min(end+window, len(b))]
	before := b[max(start-32, 0):start]
	for _, s := range secretShapes {
		m := s.after.FindSubmatchIndex(rest)
		if m == nil || s.before != nil && !s.before.Match(before) {
			continue
		}
		if !setting(rest[m[2]:m[3]]) {
			return true
		}
	}
	return false
}

// maxName is the longest name looked for on each side of its word: a run of
// identifier characters longer than that (a workload's log can be one) is no
// variable's name, and a word found in it costs no more than this to judge.
const maxName = 128

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isIdent(c byte) bool { return isUpper(c) || isLower(c) || '0' <= c && c <= '9' || c == '_' }

// placeSuffixes end a name whose value says where a secret is, or what it
// is called, never the secret: SECRET_NAME, TOKEN_URL, PASSWORD_FILE.
var placeSuffixes = []string{"_URL", "_URI", "_PATH", "_FILE", "_DIR", "_NAME", "_REF", "_TYPE"}

func namesAPlace(name []byte) bool {
	for _, s := range placeSuffixes {
		if len(name) >= len(s) && bytes.EqualFold(name[len(name)-len(s):], []byte(s)) {
			return true
		}
	}
	return false
}

// setting reports a value that is a number or a switch (TOKEN_COUNT=5,
// MAX_TOKENS=4096, ENABLE_TOKEN_AUTH=true): never a secret. A password of
// digits alone is missed; the values of a pod's env never reach the scan
// (internal/redact takes them out first), which is a net behind that.
func setting(v []byte) bool {
	switch string(bytes.ToLower(v)) {
	case "true", "false", "yes", "no", "on", "off", "null", "none", "nil", "~":
		return true
	}
	digits := 0
	for i, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.' || (c == '-' && i == 0):
		default:
			return false
		}
	}
	return digits > 0
}
