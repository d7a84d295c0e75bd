package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// enterRootArgs runs internal/enter (in localcluster-supervise, fd 3) with the container's
// identity; the environment is the command's own.
func enterRootArgs(cfg *InitConfig, tty bool, cmdline []string) []string {
	keep := make([]string, 0, len(cfg.Caps))
	for _, name := range cfg.Caps {
		keep = append(keep, strconv.Itoa(capNames[name]))
	}
	groups := make([]string, 0, len(cfg.Groups))
	for _, g := range cfg.Groups {
		groups = append(groups, strconv.FormatUint(uint64(g), 10))
	}
	args := []string{"/proc/self/fd/3", "enter-root", "--uid", strconv.FormatUint(uint64(cfg.UID), 10),
		"--gid", strconv.FormatUint(uint64(cfg.GID), 10), "--groups", strings.Join(groups, ","),
		"--keep-caps", strings.Join(keep, ","), "--cwd", cfg.Cwd}
	if cfg.NoNewPrivs {
		args = append(args, "--no-new-privs")
	}
	if cfg.Seccomp == seccompRuntimeDefault {
		args = append(args, "--seccomp-default") // an exec'd process gets the container's filter, as with runc
	}
	if tty {
		args = append(args, "--tty")
	}
	return append(append(args, "--"), cmdline...)
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
