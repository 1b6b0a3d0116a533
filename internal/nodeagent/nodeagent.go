// Package nodeagent is the wire protocol between a node pod's agent
// (cmd/heartbeat: heartbeat agent) and termlab (internal/nodepod, agent
// mode): one command per POST /run, through the API server's pods/proxy.
package nodeagent

// Request is one command: its argv, environment and stdin, how long it may
// run, and the run's token.
type Request struct {
	Token   string   `json:"token"`
	Argv    []string `json:"argv"`
	Env     []string `json:"env,omitempty"`
	Stdin   []byte   `json:"stdin,omitempty"`
	Seconds int      `json:"seconds,omitempty"`
}

// Response is what the command did; Error is set when it could not run.
type Response struct {
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
	Exit   int    `json:"exit"`
	Error  string `json:"error,omitempty"`
}

// Commands are the programs the agent runs: what a lab's node evidence
// (crictl, stat/dd/ls/cat of the audit log, readlink and cat of /proc for a held mount) and kubelet control
// (systemctl, systemd-run, journalctl) need. Anything else is refused.
var Commands = map[string]bool{
	"crictl": true, "systemctl": true, "systemd-run": true, "journalctl": true,
	"stat": true, "tail": true, "ls": true, "cat": true, "readlink": true, "dd": true,
}

// TokenEnv is the agent's environment variable holding the token.
const TokenEnv = "TERMLAB_AGENT_TOKEN"
