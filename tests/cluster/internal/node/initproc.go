package node

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"rossoctl.dev/localcluster/internal/node/seccomp"
)

// Mount is one bind mount into a container's rootfs.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	Tmpfs    bool   `json:"tmpfs,omitempty"`
}

// InitConfig is everything `node init` needs to turn itself into a container process.
type InitConfig struct {
	Rootfs       string            `json:"rootfs"`
	Image        string            `json:"image,omitempty"` // the image's root filesystem; empty: the host's dirs
	Layer        string            `json:"layer,omitempty"` // the container's writable layer (upper and work dirs)
	NetNS        string            `json:"netns"`
	Hostname     string            `json:"hostname"`
	Args         []string          `json:"args"`
	Env          []string          `json:"env"`
	Cwd          string            `json:"cwd"`
	UID          uint32            `json:"uid"`
	GID          uint32            `json:"gid"`
	Groups       []uint32          `json:"groups,omitempty"`
	NoNewPrivs   bool              `json:"noNewPrivs,omitempty"`
	ReadOnlyRoot bool              `json:"readOnlyRoot,omitempty"`
	Mounts       []Mount           `json:"mounts"`
	Cgroups      map[string]string `json:"cgroups"`
	Caps         []string          `json:"caps"`
	Seccomp      string            `json:"seccomp,omitempty"` // RuntimeDefault, or empty: unconfined
}

// hostDirs are bound read-only from the host: the only "image" a container has.
var hostDirs = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"}

// initMain runs as PID 1 of a fresh PID+mount+UTS+IPC namespace, joins the pod's network
// namespace, builds the rootfs, pivots into it and execs the container command.
func initMain(args []string) int {
	// setns(CLONE_NEWNET) is per thread; exec must happen on the same thread.
	runtime.LockOSThread()
	if len(args) != 2 || args[0] != "--config" {
		fmt.Fprintln(os.Stderr, "usage: node init --config FILE")
		return 2
	}
	var cfg InitConfig
	data, err := os.ReadFile(args[1])
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	if err == nil {
		err = containerInit(&cfg)
	}
	fmt.Fprintf(os.Stderr, "container init: %v\n", err)
	// The node reads this file to report StartError rather than a plain exit code.
	_ = os.WriteFile(args[1]+".err", []byte(err.Error()), 0o600)
	return 128
}

func containerInit(cfg *InitConfig) error {
	for _, dir := range cfg.Cgroups {
		// "0" moves the writing process; done before exec so every descendant is charged.
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("0"), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", dir, err)
		}
	}
	if cfg.NetNS != "" {
		fd, err := unix.Open(cfg.NetNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open netns: %w", err)
		}
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns: %w", err)
		}
		unix.Close(fd)
		// Pods get no IPv6: the nft rules and the safety net are IPv4 only.
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/all/disable_ipv6", []byte("1"), 0)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := buildRootfs(cfg); err != nil {
		return err
	}
	if err := pivot(cfg.Rootfs); err != nil {
		return err
	}
	if cfg.Hostname != "" {
		_ = unix.Sethostname([]byte(cfg.Hostname))
	}
	cwd := cfg.Cwd
	if cwd == "" {
		cwd = "/"
	}
	_ = os.MkdirAll(cwd, 0o755)
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("chdir %s: %w", cwd, err)
	}
	if cfg.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	if err := dropBoundingSet(cfg.Caps); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	// Last before the identity switch, after every mount the filter refuses: still root
	// with CAP_SYS_ADMIN here, so no_new_privs stays as the container asked (runc's order).
	if cfg.Seccomp == seccompRuntimeDefault {
		if err := seccomp.Install(capNumbers(cfg.Caps)); err != nil {
			return err
		}
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
	// The container starts with stdin, stdout and stderr only.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	argv0, err := lookPath(cfg.Args[0], cfg.Env)
	if err != nil {
		return err
	}
	return syscall.Exec(argv0, cfg.Args, cfg.Env)
}

func buildRootfs(cfg *InitConfig) error {
	root := cfg.Rootfs
	if cfg.Image != "" {
		if err := mountImage(cfg); err != nil {
			return err
		}
	} else if err := unix.Mount("rootfs", root, "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("rootfs tmpfs: %w", err)
	}
	for _, d := range hostDirs {
		if cfg.Image != "" {
			break
		}
		host := "/" + d
		fi, err := os.Lstat(host)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			// merged-/usr hosts have /bin -> usr/bin; keep the same shape.
			target, _ := os.Readlink(host)
			if err := os.Symlink(target, filepath.Join(root, d)); err != nil {
				return err
			}
			continue
		}
		// Not recursive: host submounts (a runtime's /etc/hosts, say) stay out of pods.
		if err := bindMountFlags(host, filepath.Join(root, d), true, 0); err != nil {
			return err
		}
	}
	for _, d := range []string{"var/tmp", "var/run", "root", "home", "run", "opt"} {
		if cfg.Image == "" { // an image brings its own
			_ = os.MkdirAll(filepath.Join(root, d), 0o755)
		}
	}
	if err := mountSpecial(root, cfg.Image == ""); err != nil {
		return err
	}
	if err := mountCgroups(root, cfg.Cgroups); err != nil {
		return err
	}
	mounts := append([]Mount(nil), cfg.Mounts...)
	sort.SliceStable(mounts, func(i, j int) bool {
		return strings.Count(mounts[i].Target, "/") < strings.Count(mounts[j].Target, "/")
	})
	for _, m := range mounts {
		target := filepath.Join(root, m.Target)
		if m.Tmpfs {
			if err := mkMountpoint(target, false); err != nil {
				return err
			}
			if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
				return err
			}
			continue
		}
		if err := bindMount(m.Source, target, m.ReadOnly); err != nil {
			return fmt.Errorf("volume %s: %w", m.Target, err)
		}
	}
	if cfg.ReadOnlyRoot {
		return readOnlyRoot(cfg)
	}
	return nil
}

func mkMountpoint(target string, file bool) error {
	if _, err := os.Stat(target); err == nil {
		return nil
	}
	if !file {
		return os.MkdirAll(target, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, nil, 0o644)
}

func bindMount(src, target string, ro bool) error {
	return bindMountFlags(src, target, ro, unix.MS_REC)
}

func bindMountFlags(src, target string, ro bool, rec uintptr) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := mkMountpoint(target, !fi.IsDir()); err != nil {
		return err
	}
	if err := unix.Mount(src, target, "", unix.MS_BIND|rec, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if ro {
		// A bind mount only becomes read-only on a remount.
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		var st unix.Statfs_t
		if unix.Statfs(target, &st) == nil {
			// Keep locked flags (nosuid/nodev/noexec) or the remount is refused.
			flags |= uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
		}
		if err := unix.Mount("", target, "", flags, ""); err != nil {
			return fmt.Errorf("remount ro %s: %w", target, err)
		}
	}
	return nil
}

// mountSpecial mounts /proc, /dev, /sys and, over the host's dirs only, a tmpfs /tmp: an
// image's /tmp is part of its root filesystem, as with a real runtime.
func mountSpecial(root string, tmp bool) error {
	type mnt struct {
		dir, fstype, src, data string
		flags                  uintptr
	}
	for _, m := range []mnt{
		{"proc", "proc", "proc", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"dev", "tmpfs", "tmpfs", "mode=0755,size=65536k", unix.MS_NOSUID},
		{"dev/pts", "devpts", "devpts", "newinstance,ptmxmode=0666,mode=0620,gid=5", unix.MS_NOSUID | unix.MS_NOEXEC},
		{"dev/shm", "tmpfs", "shm", "mode=1777,size=65536k", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"dev/mqueue", "mqueue", "mqueue", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"sys", "sysfs", "sysfs", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RDONLY},
		{"tmp", "tmpfs", "tmpfs", "mode=1777", unix.MS_NOSUID | unix.MS_NODEV},
	} {
		if m.dir == "tmp" && !tmp {
			continue
		}
		target := filepath.Join(root, m.dir)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.src, target, m.fstype, m.flags, m.data); err != nil {
			return fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	dev := filepath.Join(root, "dev")
	for name, num := range map[string][2]uint32{
		"null": {1, 3}, "zero": {1, 5}, "full": {1, 7}, "random": {1, 8}, "urandom": {1, 9}, "tty": {5, 0},
	} {
		path := filepath.Join(dev, name)
		if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(num[0], num[1]))); err != nil {
			return fmt.Errorf("mknod %s: %w", name, err)
		}
		_ = os.Chmod(path, 0o666) // mknod honours the umask
	}
	for name, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	return nil
}

// mountCgroups shows the container its own cgroup dirs where a cgroup v1 host would:
// /sys/fs/cgroup/<controller>, so memory.limit_in_bytes is readable inside.
func mountCgroups(root string, cgroups map[string]string) error {
	base := filepath.Join(root, "sys/fs/cgroup")
	if err := unix.Mount("cgroup", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("cgroup tmpfs: %w", err)
	}
	for ctl, dir := range cgroups {
		if err := bindMount(dir, filepath.Join(base, ctl), true); err != nil {
			return err
		}
	}
	return unix.Mount("", base, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

func pivot(root string) error {
	// pivot_root(".", ".") stacks the old root under the new one; detaching it leaves
	// only the container's tree, without needing a writable put_old directory.
	if err := unix.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	return unix.Chdir("/")
}
