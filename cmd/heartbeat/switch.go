package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/termlab/termlab/internal/clusterswitch"
)

// runSwitch is `heartbeat switch`: the cluster dead-man's switch
// (internal/clusterswitch), its Spec in TERMLAB_SWITCH_SPEC. Disarmed, its
// pod is deleted: SIGTERM ends the watch and nothing is undone.
func runSwitch(getenv func(string) string) int {
	say := func(s string) { fmt.Printf("%s switch: %s\n", time.Now().UTC().Format(time.RFC3339Nano), s) }
	spec, err := clusterswitch.SpecFromEnv(getenv)
	if err != nil {
		say("not armed: " + err.Error())
		return 2
	}
	api, err := clusterswitch.NewInCluster()
	if err != nil {
		say("not armed: " + err.Error())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := clusterswitch.Run(ctx, api, spec, say, time.Now); err != nil {
		say(err.Error())
		return 1
	}
	if ctx.Err() != nil {
		say("disarmed")
	}
	return 0
}
