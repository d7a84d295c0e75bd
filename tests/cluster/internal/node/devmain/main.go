// Command devmain is a throwaway driver for iterating on the node package alone.
package main

import (
	"os"

	"rossoctl.dev/localcluster/internal/node"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "node" {
		args = args[1:]
	}
	os.Exit(node.Main(args))
}
