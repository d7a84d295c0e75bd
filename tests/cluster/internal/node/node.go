// Package node is the local node: it runs pods as namespaced host processes, serves
// exec/logs on the kubelet port, and enforces NetworkPolicy with nftables.
package node

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	nodeName   = "local-node"
	bridgeName = "rossoctl0"
	bridgeIP   = "10.244.0.1"
	podCIDR    = "10.244.0.0/24"
	outsideIP  = "10.245.0.10"
	outsideGW  = "10.245.0.1"
	outsideNet = "10.245.0.0/24"
	serviceNet = "10.96.0.0/16"
	dnsIP      = "10.96.0.10"
	outsideDNS = "outside.rossoctl.test"
	nftTable   = "rossoctl"
	hostsMark  = "# rossoctl-local-cluster"
)

// Main dispatches `localcluster node [SUBCOMMAND] ...`; without a subcommand it runs the node.
func Main(args []string) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, rest := args[0], args[1:]
		switch sub {
		case "init":
			return initMain(rest)
		case "cleanup":
			return cleanupMain(rest)
		case "dns":
			return dnsMain(rest)
		case "outside":
			return outsideMain(rest)
		}
		fmt.Fprintf(os.Stderr, "node: unknown subcommand %q\n", sub)
		return 2
	}
	return runMain(args)
}

// paths names every file the node keeps under the state dir, so cleanup finds them all.
type paths struct{ dir string }

func (p paths) node(elem ...string) string {
	return filepath.Join(append([]string{p.dir, "node"}, elem...)...)
}
func (p paths) pod(uid string, elem ...string) string {
	return p.node(append([]string{"pods", uid}, elem...)...)
}
func (p paths) pki(name string) string { return filepath.Join(p.dir, "pki", name) }

func stateDirFlag(fs *flag.FlagSet) *string {
	return fs.String("state-dir", "", "local cluster state directory")
}

func absStateDir(dir string) (paths, error) {
	if dir == "" {
		return paths{}, fmt.Errorf("--state-dir is required")
	}
	abs, err := filepath.Abs(dir)
	return paths{abs}, err
}

// readEnv parses DIR/env (KEY=VALUE lines written by the driver and the node).
func readEnv(p paths) map[string]string {
	out := map[string]string{}
	data, _ := os.ReadFile(filepath.Join(p.dir, "env"))
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "export ")
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = strings.Trim(v, `"'`)
		}
	}
	return out
}

func appendEnv(p paths, key, value string) error {
	f, err := os.OpenFile(filepath.Join(p.dir, "env"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s=%s\n", key, value)
	return err
}
