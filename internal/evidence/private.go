package evidence

import "io/fs"

// A run folder and a diagnosis are their user's alone: they hold what the
// cluster said about its workloads (names, images, commands, the node's
// answers), which is for the people who can read the cluster, not for
// everyone on the machine. Folders are made with PrivateDir, files with
// PrivateFile; results/ itself and its index stay readable.
const (
	PrivateDir  fs.FileMode = 0o700
	PrivateFile fs.FileMode = 0o600
)
