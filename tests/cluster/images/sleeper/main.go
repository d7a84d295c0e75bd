// Command sleeper is the stand-in images' PID 1 (and the distroless one's only program):
// `sleeper SECONDS|infinity`. It is static (CGO_ENABLED=0) so an image needs no libc, and exits
// on SIGTERM as a PID 1 should, so a deleted pod goes at once instead of after its grace period.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	wait := time.Duration(1<<63 - 1)
	if len(os.Args) > 1 && os.Args[1] != "infinity" {
		seconds, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || seconds < 0 {
			fmt.Fprintf(os.Stderr, "sleep: invalid time interval %q\n", os.Args[1])
			os.Exit(1)
		}
		wait = time.Duration(seconds * float64(time.Second))
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case <-time.After(wait):
	}
}
