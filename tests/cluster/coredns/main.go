// Command coredns is CoreDNS (github.com/coredns/coredns, as released) with only the plugins
// the real node's cluster DNS uses: the kubernetes zone, hosts for the harness's own names, and
// no forward plugin, so a pod's query never leaves the cluster.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// The plugin chain's order, as CoreDNS's plugin.cfg orders these plugins.
var directives = []string{"reload", "ready", "health", "errors", "log", "cache", "hosts", "kubernetes"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
