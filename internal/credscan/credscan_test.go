package credscan

import (
	"os"
	"path/filepath"
	"testing"
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
