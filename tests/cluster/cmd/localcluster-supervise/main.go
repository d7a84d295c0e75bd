// Command localcluster-supervise restarts a local-cluster component that exits on its own. A
// binary of its own, not a subcommand of localcluster: that one's package initialisation
// (all of Kubernetes) costs about 100 MiB per process, this one a few.
package main

import (
	"os"

	"rossoctl.dev/localcluster/internal/supervise"
)

func main() {
	os.Exit(supervise.Main(os.Args[1:]))
}
