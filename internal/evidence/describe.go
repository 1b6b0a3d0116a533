package evidence

import "fmt"

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
