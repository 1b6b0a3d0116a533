// Package nodeagent is the wire protocol between a node pod's agent
// (cmd/heartbeat: heartbeat agent) and termlab (internal/nodepod, agent
// mode): one command per POST /run, through the API server's pods/proxy.
// It also holds what both sides check: the allow-list of commands
// (Allowed, allow.go), the environment (CheckEnv) and the token's hash.
package nodeagent

import (
	"crypto/sha256"
	"encoding/hex"
)

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

// The agent's environment, set in the node pod's spec.
const (
	// TokenHashEnv holds TokenHash of the run's token. The token itself
	// stays in the memory of the termlab that started the pod: nothing in
	// the cluster (no Secret, no pod spec) holds it, so reading the pod or
	// its namespace gives nobody a way to call the agent.
	TokenHashEnv = "TERMLAB_AGENT_TOKEN_SHA256"
	// PodIPEnv holds the pod's IP (the downward API's status.podIP; with
	// the host's network, the node's IP): the one address the agent
	// listens on, the one pods/proxy connects to.
	PodIPEnv = "TERMLAB_AGENT_POD_IP"
)

// TokenHash is the hex SHA-256 of a token. A token is 24 random bytes, so
// its hash gives no way back to it.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
