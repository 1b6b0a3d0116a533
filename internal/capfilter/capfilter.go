// Package capfilter removes, from OCI runtime JSON, the Linux capabilities
// that the current process's bounding set does not hold. On hosts whose
// bounding set lacks a capability (CAP_SYS_RESOURCE on our CI machines),
// runc refuses `docker run --privileged` with "unable to apply caps:
// operation not permitted"; dropping only what the host cannot grant anyway
// lets privileged containers (kind nodes) start. It never adds anything.
package capfilter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// names lists capability names by number (linux/capability.h).
var names = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// Set is a set of capability names such as "CAP_SYS_ADMIN".
type Set map[string]bool

// Missing returns the known capability names absent from the bounding mask.
func Missing(bounding uint64) []string {
	var out []string
	for i, n := range names {
		if bounding&(1<<uint(i)) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// ParseStatusCapBnd reads the CapBnd mask from /proc/<pid>/status content.
func ParseStatusCapBnd(r io.Reader) (uint64, error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapBnd line in process status")
}

// OwnBounding returns the running process's capability bounding mask.
func OwnBounding() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return ParseStatusCapBnd(f)
}

// capKinds are the capability lists of an OCI process.
var capKinds = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// FilterProcess drops the missing capabilities from an OCI "process" object
// (decoded with UseNumber so other fields round-trip unchanged). It reports
// the names it removed.
func FilterProcess(process map[string]any, missing Set) []string {
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return nil
	}
	removed := Set{}
	for _, kind := range capKinds {
		list, ok := caps[kind].([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			if name, _ := c.(string); missing[name] {
				removed[name] = true
				continue
			}
			kept = append(kept, c)
		}
		caps[kind] = kept
	}
	out := make([]string, 0, len(removed))
	for _, n := range names {
		if removed[n] {
			out = append(out, n)
		}
	}
	return out
}

// FilterConfig rewrites a whole OCI bundle config.json (the process is under "process").
func FilterConfig(data []byte, missing Set) ([]byte, []string, error) {
	return rewrite(data, missing, func(doc map[string]any) map[string]any {
		p, _ := doc["process"].(map[string]any)
		return p
	})
}

// FilterProcessJSON rewrites a process.json as passed to `runc exec --process`.
func FilterProcessJSON(data []byte, missing Set) ([]byte, []string, error) {
	return rewrite(data, missing, func(doc map[string]any) map[string]any { return doc })
}

func rewrite(data []byte, missing Set, process func(map[string]any) map[string]any) ([]byte, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("decoding OCI JSON: %w", err)
	}
	p := process(doc)
	if p == nil {
		return data, nil, nil
	}
	removed := FilterProcess(p, missing)
	if len(removed) == 0 {
		return data, nil, nil
	}
	out, err := json.Marshal(doc)
	return out, removed, err
}
