package main

import "testing"

func TestSubcommandSkipsGlobalFlags(t *testing.T) {
	sub, rest := subcommand([]string{"--root", "/run/x", "--log", "/l", "--log-format", "json", "--systemd-cgroup", "create", "--bundle", "/b", "id"})
	if sub != "create" || flagValue(rest, "--bundle", "-b") != "/b" {
		t.Fatalf("got %q %v", sub, rest)
	}
	sub, rest = subcommand([]string{"--root=/r", "exec", "--process=/tmp/p.json", "id"})
	if sub != "exec" || flagValue(rest, "--process", "-p") != "/tmp/p.json" {
		t.Fatalf("got %q %v", sub, rest)
	}
	if sub, _ := subcommand([]string{"--version"}); sub != "" {
		t.Fatalf("got %q", sub)
	}
}
