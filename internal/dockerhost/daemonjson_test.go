package dockerhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const userDaemonJSON = `{
  "log-level": "warn",
  "max-concurrent-downloads": 12345678901234567890,
  "default-runtime": "nvidia",
  "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}
}
`

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return m
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// onlyFiles fails when dir holds anything but names (a temporary file left).
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
}

func TestRegisterWrapperKeepsKeysAndBacksUpOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.json")
	backup := path + BackupSuffix
	if err := os.WriteFile(path, []byte(userDaemonJSON), 0o640); err != nil {
		t.Fatal(err)
	}
	before := inode(t, path)

	did, err := registerWrapper(path, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(did, "kept in "+backup) {
		t.Fatalf("told %q", did)
	}
	got := readJSON(t, path)
	if got["log-level"] != "warn" || got["max-concurrent-downloads"] != json.Number("12345678901234567890") {
		t.Fatalf("user keys not kept exactly: %v", got)
	}
	runtimes := got["runtimes"].(map[string]any)
	if runtimes["nvidia"] == nil || runtimes[WrapperRuntime] == nil || got["default-runtime"] != WrapperRuntime {
		t.Fatalf("merge wrong: %v", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	if inode(t, path) == before {
		t.Fatal("daemon.json was rewritten in place, not replaced by a rename")
	}
	if b, _ := os.ReadFile(backup); string(b) != userDaemonJSON {
		t.Fatalf("backup holds %q, want the file as it was", b)
	}
	if st, _ := os.Stat(backup); st.Mode().Perm() != 0o640 {
		t.Fatalf("backup mode %v, want 0640", st.Mode().Perm())
	}
	onlyFiles(t, dir, "daemon.json", "daemon.json"+BackupSuffix)

	// Already registered: nothing written.
	if did, err := registerWrapper(path, "/w"); err != nil || did != "" {
		t.Fatalf("second run with the same wrapper: %q %v", did, err)
	}

	// The user edits the file, then a new wrapper path: the backup stays the
	// file as it was before termlab.
	edited := got
	edited["debug"] = true
	data, _ := json.Marshal(edited)
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	did, err = registerWrapper(path, "/w2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(did, "already holds") {
		t.Fatalf("told %q", did)
	}
	if b, _ := os.ReadFile(backup); string(b) != userDaemonJSON {
		t.Fatalf("backup overwritten: %q", b)
	}
	if got := readJSON(t, path); got["debug"] != true || got["runtimes"].(map[string]any)[WrapperRuntime].(map[string]any)["path"] != "/w2" {
		t.Fatalf("second change: %v", got)
	}
	onlyFiles(t, dir, "daemon.json", "daemon.json"+BackupSuffix)

	ch, ok := ReadDaemonJSONChange(path)
	if !ok || ch.Backup != backup || ch.Undo() != "`mv "+backup+" "+path+"`, then restart dockerd" {
		t.Fatalf("change %+v %v: undo %q", ch, ok, ch.Undo())
	}
}

func TestRegisterWrapperWithoutAFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docker")
	path := filepath.Join(dir, "daemon.json")
	did, err := registerWrapper(path, "/w")
	if err != nil || !strings.Contains(did, "there was none") {
		t.Fatalf("%q %v", did, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	onlyFiles(t, dir, "daemon.json") // nothing to back up
	ch, ok := ReadDaemonJSONChange(path)
	if !ok || ch.Backup != "" || !ch.OnlyTermlab || !strings.HasPrefix(ch.Undo(), "`rm "+path+"`") {
		t.Fatalf("change %+v %v: undo %q", ch, ok, ch.Undo())
	}
	// The user adds a key of their own: undo names termlab's keys instead.
	m := readJSON(t, path)
	m["debug"] = true
	data, _ := json.Marshal(m)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ch, _ = ReadDaemonJSONChange(path)
	if want := `remove "default-runtime" and "runtimes"."termlab-runc" from ` + path; !strings.HasPrefix(ch.Undo(), want) {
		t.Fatalf("undo %q, want %q…", ch.Undo(), want)
	}
}

func TestRegisterWrapperLeavesAFileItCannotMerge(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":              "{log-level: warn",
		"runtimes not a object": `{"runtimes": "runc"}`,
		"not an object":         `["a"]`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "daemon.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := registerWrapper(path, "/w"); err == nil {
				t.Fatal("no error")
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("file changed to %q", b)
			}
			onlyFiles(t, dir, "daemon.json")
		})
	}
}

func TestRegisterWrapperThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(real, []byte(`{"debug": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := registerWrapper(link, "/w"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", st, err)
	}
	if got := readJSON(t, real); got["debug"] != true || got["default-runtime"] != WrapperRuntime {
		t.Fatalf("target: %v", got)
	}
	if b, _ := os.ReadFile(link + BackupSuffix); string(b) != `{"debug": true}` {
		t.Fatalf("backup %q", b)
	}
}

func TestReadDaemonJSONChangeWithoutTermlabKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.json")
	if _, ok := ReadDaemonJSONChange(path); ok {
		t.Fatal("no file: nothing to undo")
	}
	if err := os.WriteFile(path, []byte(userDaemonJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if ch, ok := ReadDaemonJSONChange(path); ok {
		t.Fatalf("a file without termlab's keys: %+v", ch)
	}
}
