// Package outside is the outside world of the local cluster: an HTTP server in a network
// namespace of its own behind the node (real-node.sh), which pods reach only where their
// NetworkPolicy lets them out. verify's positive control and the egress tests aim at it.
package outside

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

// Main serves a fixed greeting that names the caller's address and path.
func Main(args []string) int {
	fs := flag.NewFlagSet("outside", flag.ContinueOnError)
	addr := fs.String("listen", ":80", "listen address")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "hello from the outside world (%s asked for %s)\n", r.RemoteAddr, r.URL.Path)
	})
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintln(os.Stderr, srv.ListenAndServe())
	return 1
}
