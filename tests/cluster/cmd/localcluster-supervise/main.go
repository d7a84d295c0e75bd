// Command localcluster-supervise restarts a local-cluster component that exits on its own. A
// binary of its own, not a subcommand of localcluster: that one's package initialisation
// (all of Kubernetes) costs about 100 MiB per process, this one a few.
package main

import (
	"os"

	"rossoctl.dev/localcluster/internal/enter"
	"rossoctl.dev/localcluster/internal/supervise"
)

func main() {
	// Static, so the node runs it inside any image for `kubectl exec` (internal/enter).
	if len(os.Args) > 1 && os.Args[1] == "enter-root" {
		os.Exit(enter.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "join-cgroups" {
		os.Exit(enter.JoinCgroupsMain(os.Args[2:]))
	}
	os.Exit(supervise.Main(os.Args[1:]))
}
