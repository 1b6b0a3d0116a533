package credscan

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDirFindsCredentialsAndNotEvidence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What evidence normally holds must not trip the check.
	write("steps/01/held.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: held\n  finalizers:\n  - lab.example.com/cleanup\nspec:\n  automountServiceAccountToken: false\n  serviceAccountName: default\n")
	write("events.jsonl", `{"object":{"spec":{"serviceAccountName":"default","volumes":[{"projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}]}}]}}}`+"\n")
	write("steps/01/held-crictl-logs.txt", "heartbeat seq=1 time=2026-12-02T10:00:01Z\n")
	leaks, err := Dir(dir)
	if err != nil || len(leaks) > 0 {
		t.Fatalf("false alarm: %v %v", leaks, err)
	}
	for name, content := range map[string]string{
		"a.yaml": "users:\n- user:\n    client-key-data: LS0t\n",
		"b.pem":  "-----BEGIN CERTIFICATE-----\nMIIB\n",
		"c.json": `{"token": "abcdefghijklmnop"}`,
		"d.txt":  "-----BEGIN RSA PRIVATE KEY-----\n",
		"e.txt":  "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.sig",
	} {
		write(name, content)
	}
	leaks, err = Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, l := range leaks {
		files[l.File] = true
	}
	for _, f := range []string{"a.yaml", "b.pem", "c.json", "d.txt", "e.txt"} {
		if !files[f] {
			t.Errorf("%s not reported (leaks %v)", f, leaks)
		}
	}
}

func TestBytes(t *testing.T) {
	if l := Bytes("x", []byte("client-certificate-data: LS0t")); len(l) != 1 || l[0].File != "x" {
		t.Errorf("Bytes = %v", l)
	}
	if l := Bytes("x", []byte("phase: Running")); len(l) != 0 {
		t.Errorf("false alarm: %v", l)
	}
}

// A file larger than a block is scanned a block at a time: a credential
// across two blocks, in a line longer than a block or after many lines, is
// still found; a file without one is clean.
func TestDirScansLargeFilesInBlocks(t *testing.T) {
	dir := t.TempDir()
	jwt := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0"
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", block-10) + jwt + strings.Repeat("y", block) // one line, the token across the first block's end
	write("long.jsonl", long)
	lines := strings.Repeat(`{"a":"`+strings.Repeat("z", 1000)+`"}`+"\n", 3*block/1000) + "client-key-data: abc\n"
	write("lines.jsonl", lines)
	write("clean.jsonl", strings.Repeat(`{"token_count":1}`+"\n", block/8))
	leaks, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range leaks {
		got[l.File] += l.Pattern + ";"
	}
	if got["long.jsonl"] != "JSON web token;" || got["lines.jsonl"] != "kubeconfig client key;" || got["clean.jsonl"] != "" {
		t.Errorf("leaks %v", got)
	}
}

// The case-blind pattern finds its literal in the text lowered and matches in
// the text as it is, so both must keep every byte's offset: "İ" is two bytes
// and lowers (by Unicode) to one, "i", which would move the match window off
// the token.
func TestCaseBlindMatchAfterNonASCII(t *testing.T) {
	text := strings.Repeat("İ", 300) + " Authorization: BEARER abcdefghijklmnopqrstuvwx\n"
	if l := Bytes("x", []byte(text)); len(l) != 1 || l[0].Pattern != "bearer token" {
		t.Errorf("Bytes = %v, want the bearer token", l)
	}
}

// A scan of many blocks lowers each into one buffer: its allocations do not
// grow with the file (a 751 MiB run folder allocated ~800 MB when each block
// was lowered into a new one).
func TestFileScanAllocatesPerFileNotPerBlock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat(`{"phase":"Running"}`+"\n", 8*block/20)), 0o644); err != nil {
		t.Fatal(err)
	}
	var ms1, ms2 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	if l, err := file(path, "events.jsonl"); err != nil || len(l) > 0 {
		t.Fatal(l, err)
	}
	runtime.ReadMemStats(&ms2)
	// Two blocks' worth: the read buffer and the lowered one; eight blocks
	// were read.
	if got := ms2.TotalAlloc - ms1.TotalAlloc; got > 3*block {
		t.Errorf("scanning 8 blocks allocated %d bytes, want at most %d", got, 3*block)
	}
}

// A variable whose name says it holds a secret is a leak when it has a
// value, in each shape a run folder or a diagnosis holds one: a process's
// environment (crictl inspect's runtime spec), JSON and YAML objects, a
// container's env in JSON or YAML, the CRI's env. A reference (valueFrom,
// $VAR), an empty value, a number or a switch, a name that says where the
// secret is, and Kubernetes' own camelCase fields are not.
func TestSecretNamedValues(t *testing.T) {
	for _, tc := range []struct {
		text string
		leak bool
	}{
		{`"env": ["PATH=/usr/bin", "DB_PASSWORD=hunter2"]`, true},
		{`DB_PASSWORD=hunter2`, true},
		{`db_password=hunter2`, true},
		{`{"API_KEY":"abc"}`, true},
		{`{"API_KEY": "abc"}`, true},
		{`GITHUB_TOKEN: ghp_16C7e42F292c6912E7710c838347Ae178B4a`, true},
		{`export AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI'`, true},
		{`SECRET=s3`, true},
		{`{"name":"DB_PASSWORD","value":"x"}`, true},
		{`"env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"DB_PASSWORD","value":"x"}]`, true},
		{"\"envs\": [\n  {\n    \"key\": \"GITHUB_TOKEN\",\n    \"value\": \"ghp_abc\"\n  }\n]", true},
		{"    - name: DB_PASSWORD\n      value: hunter2\n", true},
		{"  key: client_secret\n  value: \"abc\"\n", true},

		{`{"name":"API_KEY","valueFrom":{"secretKeyRef":{"key":"API_KEY","name":"planted"}}}`, false},
		{"    - name: API_KEY\n      valueFrom:\n        secretKeyRef:\n          key: API_KEY\n", false},
		{`"envFrom":[{"secretRef":{"name":"planted"}}]`, false},
		{`{"name":"DB_PASSWORD"}`, false},
		{`{"name":"DB_PASSWORD","value":""}`, false},
		{`DB_PASSWORD=`, false},
		{`DB_PASSWORD=""`, false},
		{`API_KEY=$(cat /run/secrets/api)`, false},
		{`GITHUB_TOKEN=${GITHUB_TOKEN}`, false},
		{"DB_PASSWORD:\n  valueFrom: {}\n", false},
		{`TOKEN_COUNT=5`, false},
		{`"MAX_TOKENS": 4096`, false},
		{`ENABLE_TOKEN_AUTH=true`, false},
		{`SECRET_NAME=db-credentials`, false},
		{`PASSWORD_FILE=/run/secrets/db`, false},
		{`TOKEN_URL=https://auth.example.com/token`, false},
		{`API_KEY_ID=AKIDEXAMPLE`, false},
		{`{"automountServiceAccountToken":false,"volumes":[{"secret":{"secretName":"planted"}}]}`, false},
		{"spec:\n  automountServiceAccountToken: false\n  volumes:\n  - secret:\n      secretName: planted\n", false},
		{`"Couldn't get secret" secret="ns/planted" err="not found"`, false},
		{`{"projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}}`, false},
		{`{"key":"API_KEY","name":"planted"}`, false},
		{`dbPassword: hunter2`, false},
	} {
		leaks := Bytes("x", []byte(tc.text))
		found := false
		for _, l := range leaks {
			found = found || l.Pattern == secretNamedPattern
		}
		if found != tc.leak {
			t.Errorf("%q: found %v, want %v (leaks %v)", tc.text, found, tc.leak, leaks)
		}
	}
}

// Each kind of leak is reported once, however many of its words it holds.
func TestSecretNamedReportedOnce(t *testing.T) {
	if l := Bytes("x", []byte(`SECRET_KEY=a DB_PASSWORD=b GITHUB_TOKEN=c`)); len(l) != 1 {
		t.Errorf("Bytes = %v, want one leak", l)
	}
}

// A line of nothing but a word, as a workload may log, costs a bounded look
// per place the word is, not a walk to the line's ends from each.
func TestSecretNamedWordRunIsCheap(t *testing.T) {
	text := []byte(strings.Repeat("TOKEN", block/5) + "=x\n")
	start := time.Now()
	if l := Bytes("x", text); len(l) > 0 {
		t.Errorf("a run of words is not a name: %v", l)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("scanning %d bytes of one word took %s", len(text), took)
	}
}
