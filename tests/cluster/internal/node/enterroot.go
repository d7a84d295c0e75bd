package node

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// enterRootArgs is the tail of an exec's command line from the host's mount namespace: the
// process (already in the container's other namespaces) takes the container's root through
// /proc/PID/root, so no helper binary has to exist in the image.
func enterRootArgs(self string, pid int, cfgPath string, tty bool, cmdline []string) []string {
	args := []string{self, "node", "enter-root", "--pid", strconv.Itoa(pid), "--config", cfgPath}
	if tty {
		args = append(args, "--tty")
	}
	return append(append(args, "--"), cmdline...)
}

// enterRootMain: chroot into the container's root, take its identity and environment, exec.
func enterRootMain(args []string) int {
	runtime.LockOSThread()
	tty := false
	var pid, cfgPath string
	for len(args) > 0 && args[0] != "--" {
		switch {
		case args[0] == "--tty":
			tty, args = true, args[1:]
		case len(args) > 1 && args[0] == "--pid":
			pid, args = args[1], args[2:]
		case len(args) > 1 && args[0] == "--config":
			cfgPath, args = args[1], args[2:]
		default:
			args = nil
		}
	}
	if len(args) < 2 || pid == "" || cfgPath == "" {
		fmt.Fprintln(os.Stderr, "usage: node enter-root --pid PID --config FILE [--tty] -- CMD...")
		return 2
	}
	err := enterRoot(pid, cfgPath, tty, args[1:])
	fmt.Fprintf(os.Stderr, "exec: %v\n", err)
	return 126
}

func enterRoot(pid, cfgPath string, tty bool, cmdline []string) error {
	var cfg InitConfig
	data, err := os.ReadFile(cfgPath)
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	if err != nil {
		return err
	}
	if err := syscall.Chroot(filepath.Join("/proc", pid, "root")); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	cwd := cfg.Cwd
	if cwd == "" || os.Chdir(cwd) != nil {
		_ = os.Chdir("/")
	}
	if tty {
		// The session (and job control) belongs to the container's PID namespace.
		if _, err := unix.Setsid(); err != nil {
			return fmt.Errorf("setsid: %w", err)
		}
		if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
			return fmt.Errorf("controlling terminal: %w", err)
		}
	}
	if cfg.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	if err := dropBoundingSet(cfg.Caps); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	groups := make([]int, 0, len(cfg.Groups))
	for _, g := range cfg.Groups {
		groups = append(groups, int(g))
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(int(cfg.GID)); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(int(cfg.UID)); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	argv0, err := lookPath(cmdline[0], cfg.Env)
	if err != nil {
		return err
	}
	return syscall.Exec(argv0, cmdline, cfg.Env)
}

// execLookup is the runtime's check before an exec: a command the container cannot run fails
// the exec itself (no exit code), as with containerd.
func execLookup(pid int, env []string, name string) error {
	root := filepath.Join("/proc", strconv.Itoa(pid), "root")
	if filepath.IsAbs(name) {
		if fi, err := statIn(root, name); err != nil || fi.IsDir() {
			return fmt.Errorf("OCI runtime exec failed: exec failed: unable to start container process: exec: %q: stat %s: no such file or directory: unknown", name, name)
		}
		return nil
	}
	path := defaultPath
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if fi, err := statIn(root, filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return fmt.Errorf("OCI runtime exec failed: exec failed: unable to start container process: exec: %q: executable file not found in $PATH: unknown", name)
}

// statIn stats p as the container sees it: absolute symlinks (busybox's applets) resolve
// inside root, not on the host.
func statIn(root, p string) (os.FileInfo, error) {
	for range 40 {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return fi, err
		}
		target, err := os.Readlink(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean("/" + target)
	}
	return nil, fmt.Errorf("%s: too many levels of symbolic links", p)
}
