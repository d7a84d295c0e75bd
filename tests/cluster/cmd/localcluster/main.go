// Command localcluster is a multi-call binary: each subcommand runs one component of
// the local cluster as its own process, so a test can stop and start any one of them.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"rossoctl.dev/localcluster/internal/controlplane"
	"rossoctl.dev/localcluster/internal/outside"
	"rossoctl.dev/localcluster/internal/provisioner"
	"rossoctl.dev/localcluster/internal/sandboxcontroller"
)

var components = map[string]func(args []string) int{
	"etcd":                    controlplane.EtcdMain,
	"kube-apiserver":          controlplane.APIServerMain,
	"kube-controller-manager": controlplane.ControllerManagerMain,
	"kube-scheduler":          controlplane.SchedulerMain,
	"kubectl":                 controlplane.KubectlMain,
	"sandbox-controller":      sandboxcontroller.Main,
	"outside":                 outside.Main,
	"provisioner":             provisioner.Main,
	// Helpers for the local-cluster driver.
	"pki":              controlplane.PKIMain,
	"free-ports":       controlplane.FreePortsMain,
	"crd-only-version": controlplane.CRDOnlyVersionMain,
}

func usage() {
	names := make([]string, 0, len(components))
	for n := range components {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: localcluster COMPONENT [ARGS...]\ncomponents: %v\n", names)
}

func main() {
	// Called through a symlink (bin/kubectl), the link's name picks the component.
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if _, ok := components[name]; !ok {
		if len(args) == 0 {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	run, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "localcluster: unknown component %q\n", name)
		usage()
		os.Exit(2)
	}
	// Components that read os.Args themselves (kubectl's plugin lookup) see their own argv.
	os.Args = append([]string{name}, args...)
	os.Exit(run(args))
}
