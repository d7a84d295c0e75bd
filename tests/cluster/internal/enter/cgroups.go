package enter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// JoinCgroupsMain runs `join-cgroups --cgroups DIR,... -- CMD...`: it joins the cgroups, then
// execs CMD, so exec'd processes are charged to (and killed with) the container. It is the
// first step of every exec, so it lives in the small static binary: the node's own binary
// initialises all of Kubernetes (~100 ms of CPU) before doing anything.
func JoinCgroupsMain(args []string) int {
	if len(args) < 4 || args[0] != "--cgroups" || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "usage: join-cgroups --cgroups DIR,... -- CMD...")
		return 2
	}
	for _, dir := range strings.Split(args[1], ",") {
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0"), 0); err != nil {
				fmt.Fprintf(os.Stderr, "enter: %v\n", err)
				return 126
			}
		}
	}
	err := syscall.Exec(args[3], args[3:], os.Environ())
	fmt.Fprintf(os.Stderr, "enter: %v\n", err)
	return 126
}
