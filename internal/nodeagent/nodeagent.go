// Package nodeagent is the wire protocol between a node pod's agent
// (cmd/heartbeat: heartbeat agent) and termlab (internal/nodepod, agent
// mode): one command per POST /run, through the API server's pods/proxy.
// It also holds what both sides check: the allow-list of commands
// (Allowed, allow.go) and the environment (CheckEnv).
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

// TokenEnv is the agent's environment variable holding the token.
const TokenEnv = "TERMLAB_AGENT_TOKEN"
