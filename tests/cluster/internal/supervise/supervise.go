// Package supervise restarts a component that exits on its own, as the kubelet restarts a
// control plane's static pods. kube-scheduler exits by design when its cache goes corrupt
// (an apiserver restart mid-binding can do it); unsupervised, pods would stay Pending.
package supervise

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Main runs `PROGRAM ARGS...` and starts it again after an exit it was not asked for;
// SIGTERM/SIGINT are passed on and end the supervisor once the child has exited.
func Main(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: localcluster-supervise PROGRAM COMPONENT [ARGS...]")
		return 2
	}
	self, args := args[0], args[1:]
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	backoff := time.Second
	for {
		cmd := exec.Command(self, args...)
		cmd.Args[0] = "localcluster"
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "supervise:", err)
			return 1
		}
		started := time.Now()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case sig := <-signals:
			_ = cmd.Process.Signal(sig)
			<-done
			return 0
		case err := <-done:
			// A component that ran a while gets a fresh backoff; one that crash-loops waits longer.
			if time.Since(started) > time.Minute {
				backoff = time.Second
			}
			fmt.Fprintf(os.Stderr, "=== %s supervise: %s exited (%v); restarting in %s\n",
				time.Now().UTC().Format(time.RFC3339), args[0], err, backoff)
			select {
			case <-signals:
				return 0
			case <-time.After(backoff):
			}
			if backoff < 30*time.Second {
				backoff *= 2
			}
		}
	}
}
