// Package enter is the last step of an exec into a container: already in the container's
// namespaces and root (nsenter), it takes the container's identity and runs the command. It
// runs from the static localcluster-supervise binary through /proc/self/fd, so the image
// needs no libc, nsenter, setpriv or env of its own.
package enter

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"rossoctl.dev/localcluster/internal/node/seccomp"
)

// Main runs `enter-root --uid U --gid G [--groups 1,2] [--keep-caps 0,5] [--no-new-privs]
// [--seccomp-default] [--cwd DIR] [--tty] -- CMD...` with the environment it was given.
func Main(args []string) int {
	runtime.LockOSThread()
	fs := flag.NewFlagSet("enter-root", flag.ContinueOnError)
	uid := fs.Int("uid", 0, "user id")
	gid := fs.Int("gid", 0, "group id")
	groups := fs.String("groups", "", "supplementary groups, comma-separated")
	keep := fs.String("keep-caps", "", "capabilities kept in the bounding set, by number")
	nnp := fs.Bool("no-new-privs", false, "set no_new_privs")
	seccompDefault := fs.Bool("seccomp-default", false, "install the node's RuntimeDefault seccomp filter")
	cwd := fs.String("cwd", "", "working directory")
	tty := fs.Bool("tty", false, "make stdin the controlling terminal of a new session")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: enter-root --uid U --gid G [...] -- CMD...")
		return 2
	}
	err := run(*uid, *gid, *groups, *keep, *nnp, *seccompDefault, *cwd, *tty, fs.Args())
	fmt.Fprintf(os.Stderr, "exec: %v\n", err)
	return 126
}

func run(uid, gid int, groups, keep string, nnp, seccompDefault bool, cwd string, tty bool, cmd []string) error {
	if cwd == "" || os.Chdir(cwd) != nil {
		_ = os.Chdir("/")
	}
	if tty {
		if _, err := unix.Setsid(); err != nil {
			return fmt.Errorf("setsid: %w", err)
		}
		if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
			return fmt.Errorf("controlling terminal: %w", err)
		}
	}
	if nnp {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	kept := map[int]bool{}
	for _, c := range strings.Split(keep, ",") {
		if n, err := strconv.Atoi(c); err == nil {
			kept[n] = true
		}
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if !kept[c] {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("drop capability %d: %w", c, err)
			}
		}
	}
	if seccompDefault { // before the identity switch, as the container's init does
		caps := make([]int, 0, len(kept))
		for c := range kept {
			caps = append(caps, c)
		}
		if err := seccomp.Install(caps); err != nil {
			return err
		}
	}
	var gs []int
	for _, g := range strings.Split(groups, ",") {
		if n, err := strconv.Atoi(g); err == nil {
			gs = append(gs, n)
		}
	}
	if err := syscall.Setgroups(gs); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	path, err := lookPath(cmd[0])
	if err != nil {
		return err
	}
	// The binary's own fd (3, through /proc/self/fd) must not reach the command.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	return syscall.Exec(path, cmd, os.Environ())
}

func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(`exec: "` + name + `": executable file not found in $PATH`)
}
