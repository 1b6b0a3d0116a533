package evidence

import (
	"fmt"
	"strings"
	"time"
)

// Stopped reports whether crictl saw the container exited or already removed.
func (o ContainerObservation) Stopped() bool {
	return o.State == ContainerExited || o.State == ContainerNotFound
}

// Describe is the one-line form the labs print: id, state, exit code, last heartbeat.
func (o ContainerObservation) Describe() string {
	s := fmt.Sprintf("container %.13s %s", o.ContainerID, o.State)
	if o.ExitCode != nil {
		s += fmt.Sprintf(" exit code %d", *o.ExitCode)
	}
	if o.Log != nil {
		s += fmt.Sprintf(", last heartbeat seq=%d", o.Log.LastSeq)
		if o.Log.Signal != "" {
			s += ", " + o.Log.Signal + " logged"
		}
	}
	return s
}

// Describe is a one-line summary of a pod event for progress output and errors.
func Describe(e PodEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s rv=%s phase=%s", e.Type, e.ResourceVersion, orDash(e.Phase))
	if e.DeletionTimestamp != nil {
		fmt.Fprintf(&b, " deletionTimestamp=%s", e.DeletionTimestamp.Format(time.RFC3339))
	}
	if e.DeletionGracePeriodSeconds != nil {
		fmt.Fprintf(&b, " deletionGracePeriodSeconds=%d", *e.DeletionGracePeriodSeconds)
	}
	if len(e.Finalizers) > 0 {
		fmt.Fprintf(&b, " finalizers=%v", e.Finalizers)
	}
	for _, c := range e.Containers {
		fmt.Fprintf(&b, " %s=%s", c.Name, orDash(c.State))
		if c.ExitCode != nil {
			fmt.Fprintf(&b, "(exit %d)", *c.ExitCode)
		}
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
