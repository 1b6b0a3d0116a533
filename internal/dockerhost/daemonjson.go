package dockerhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// BackupSuffix names the copy of daemon.json as it was before termlab first
// changed it: DaemonJSON + BackupSuffix. It is taken once and never
// overwritten, so it always holds the user's own file.
const BackupSuffix = ".before-termlab"

// The keys termlab sets in daemon.json; every other key is the user's and kept.
const (
	keyDefaultRuntime = "default-runtime"
	keyRuntimes       = "runtimes"
)

// daemonConfig is daemon.json as read: its settings, its bytes and file mode
// as they were, and whether the file existed.
type daemonConfig struct {
	path     string // the file written: DaemonJSON, or what it links to
	settings map[string]any
	raw      []byte
	exists   bool
	mode     fs.FileMode
	uid, gid int // owner to keep; -1 when the file is new
}

// readDaemonConfig reads daemon.json at path. A missing or blank file is no
// settings; a file that is not a JSON object is an error, and nothing may be
// written over it. Numbers are kept as written (json.Number).
func readDaemonConfig(path string) (daemonConfig, error) {
	c := daemonConfig{path: path, settings: map[string]any{}, mode: 0o644, uid: -1, gid: -1}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		c.path = real // a linked daemon.json is changed where it lives, the link kept
	}
	st, err := os.Stat(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if !st.Mode().IsRegular() {
		return c, fmt.Errorf("%s is not a regular file", path)
	}
	c.exists, c.mode = true, st.Mode().Perm()
	c.uid, c.gid = fileOwner(st)
	if c.raw, err = os.ReadFile(c.path); err != nil {
		return c, err
	}
	if len(bytes.TrimSpace(c.raw)) == 0 {
		return c, nil
	}
	dec := json.NewDecoder(bytes.NewReader(c.raw))
	dec.UseNumber()
	if err := dec.Decode(&c.settings); err != nil {
		return c, fmt.Errorf("reading %s: %w", path, err)
	}
	if c.settings == nil { // the file said null
		c.settings = map[string]any{}
	}
	return c, nil
}

// wrapperSettings is daemon.json with the wrapper registered as the default
// runtime, and whether that differs from what the file holds now.
func (c daemonConfig) wrapperSettings(wrapper string) (map[string]any, bool, error) {
	if r, ok := c.settings[keyRuntimes]; ok {
		if _, isObject := r.(map[string]any); !isObject {
			return nil, false, fmt.Errorf("%s: %q is not an object; termlab would have to drop it to register %s: fix the file first", c.path, keyRuntimes, WrapperRuntime)
		}
	}
	merged := WithWrapperRuntime(c.settings, wrapper)
	return merged, !reflect.DeepEqual(merged, c.settings), nil
}

// registerWrapper makes wrapper dockerd's default runtime in daemon.json at
// path, keeping every other key. Before the first change it keeps the file as
// it was in path+BackupSuffix; the new file replaces the old one in one rename
// (same mode and owner), so dockerd never reads half a file. It reports what
// it did, "" when the file already said so.
func registerWrapper(path, wrapper string) (string, error) {
	c, err := readDaemonConfig(path)
	if err != nil {
		return "", err
	}
	merged, changed, err := c.wrapperSettings(wrapper)
	if err != nil || !changed {
		return "", err
	}
	data, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return "", err
	}
	did := "created " + path + " (there was none)"
	if c.exists {
		backup := path + BackupSuffix
		taken, err := backupOnce(c, backup)
		if err != nil {
			return "", fmt.Errorf("backing up %s before changing it: %w", path, err)
		}
		did = "changed " + path + ", the file as it was kept in " + backup
		if !taken {
			did = "changed " + path + " (" + backup + " already holds the file as it was before termlab)"
		}
	}
	if err := writeAtomic(c.path, append(data, '\n'), c.mode, c.uid, c.gid); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return did, nil
}

// backupOnce writes c's bytes to dst unless dst exists. It writes a temporary
// file and links it to dst, so dst is either absent or whole, and an existing
// backup is never replaced (link fails on an existing name).
func backupOnce(c daemonConfig, dst string) (bool, error) {
	if _, err := os.Lstat(dst); err == nil {
		return false, nil
	}
	tmp, err := writeTemp(filepath.Dir(dst), filepath.Base(dst), c.raw, c.mode, c.uid, c.gid)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, syncDir(filepath.Dir(dst))
}

// writeAtomic replaces path with data: a temporary file in the same directory,
// written, given mode (and owner uid:gid unless -1), synced, then renamed.
func writeAtomic(path string, data []byte, mode fs.FileMode, uid, gid int) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, filepath.Base(path), data, mode, uid, gid)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// writeTemp writes data to a new hidden file in dir, with mode and owner, and
// syncs it; it returns the file's name.
func writeTemp(dir, base string, data []byte, mode fs.FileMode, uid, gid int) (string, error) {
	f, err := os.CreateTemp(dir, "."+base+".termlab-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = func() error {
		if _, err := f.Write(data); err != nil {
			return err
		}
		if err := f.Chmod(mode); err != nil { // CreateTemp makes 0600; umask does not apply to chmod
			return err
		}
		if uid >= 0 && (uid != os.Geteuid() || gid != os.Getegid()) {
			if err := f.Chown(uid, gid); err != nil {
				return err
			}
		}
		return f.Sync()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WrapperSnippet is the daemon.json content that registers the wrapper at
// path as the default runtime, for a person to merge by hand.
func WrapperSnippet(path string) string {
	data, _ := json.MarshalIndent(WithWrapperRuntime(map[string]any{}, path), "", "  ")
	return string(data)
}

// DaemonJSONChange is what termlab changed in daemon.json and how to undo it.
type DaemonJSONChange struct {
	Path   string
	Backup string // the file as it was before termlab; "" when there is none
	// Keys are termlab's keys in the file ("default-runtime",
	// "runtimes.termlab-runc"); without a backup, removing them undoes it.
	Keys []string
	// OnlyTermlab: the file holds nothing but termlab's keys.
	OnlyTermlab bool
}

// Undo is the command (or edit) that puts daemon.json back as it was.
func (c DaemonJSONChange) Undo() string {
	switch {
	case c.Backup != "":
		return fmt.Sprintf("`mv %s %s`, then restart dockerd", c.Backup, c.Path)
	case c.OnlyTermlab:
		return fmt.Sprintf("`rm %s` (it holds only termlab's keys), then restart dockerd", c.Path)
	default:
		return fmt.Sprintf("remove %s from %s, then restart dockerd", strings.Join(c.Keys, " and "), c.Path)
	}
}

// ReadDaemonJSONChange reads daemon.json at path and its backup; ok is false
// when the file holds none of termlab's keys (nothing of termlab to undo).
func ReadDaemonJSONChange(path string) (DaemonJSONChange, bool) {
	c, err := readDaemonConfig(path)
	if err != nil || !c.exists {
		return DaemonJSONChange{}, false
	}
	ch := DaemonJSONChange{Path: path}
	rest := map[string]any{}
	for k, v := range c.settings {
		rest[k] = v
	}
	if rest[keyDefaultRuntime] == WrapperRuntime {
		ch.Keys = append(ch.Keys, fmt.Sprintf("%q", keyDefaultRuntime))
		delete(rest, keyDefaultRuntime)
	}
	if runtimes, ok := rest[keyRuntimes].(map[string]any); ok {
		if _, ours := runtimes[WrapperRuntime]; ours {
			ch.Keys = append(ch.Keys, fmt.Sprintf("%q.%q", keyRuntimes, WrapperRuntime))
			if len(runtimes) == 1 {
				delete(rest, keyRuntimes)
			}
		}
	}
	if len(ch.Keys) == 0 {
		return DaemonJSONChange{}, false
	}
	sort.Strings(ch.Keys)
	ch.OnlyTermlab = len(rest) == 0
	if st, err := os.Lstat(path + BackupSuffix); err == nil && st.Mode().IsRegular() {
		ch.Backup = path + BackupSuffix
	}
	return ch, true
}
