package node

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cleanupMain removes every host trace of the node and its pods; `local-cluster down` runs it.
func cleanupMain(args []string) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	dir := stateDirFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := absStateDir(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if errs := cleanupHost(p, false); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "cleanup:", e)
		}
		return 1
	}
	return 0
}

// cleanupHost kills pod processes and removes namespaces, links, rules, mounts, cgroups
// and the /etc/hosts line. keepPVCs keeps claim data across a node restart.
func cleanupHost(p paths, keepPVCs bool) []error {
	var errs []error
	if data, err := os.ReadFile(p.node("outside.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			// Only kill it if it is still our outside server, not a recycled pid.
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cmdline), "outside") {
				_ = killPID(pid)
			}
		}
	}
	for _, ctl := range cgroupControllers {
		removeCgroupDir(filepath.Join(cgroupRoot, ctl, "rossoctl"))
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || (!strings.HasPrefix(f[0], "rsp-") && f[0] != outsideNS) {
			continue
		}
		killNetnsPIDs(f[0])
		if err := run("", "ip", "netns", "del", f[0]); err != nil {
			errs = append(errs, err)
		}
	}
	if entries, err := os.ReadDir("/run/netns"); err == nil && len(entries) == 0 {
		_ = unix.Unmount("/run/netns", unix.MNT_DETACH) // ip netns' own bind mount, if we caused it
	}
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, line := range strings.Split(string(links), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name := strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0]
		if name == bridgeName || name == "rsout0" || strings.HasPrefix(name, "vrs") {
			// A veth may vanish on its own once its peer's namespace is gone.
			if err := run("", "ip", "link", "del", name); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
				errs = append(errs, err)
			}
		}
	}
	if exec.Command("nft", "list", "table", "inet", nftTable).Run() == nil {
		if err := run("", "nft", "delete", "table", "inet", nftTable); err != nil {
			errs = append(errs, err)
		}
	}
	if err := setHostsEntry(false); err != nil {
		errs = append(errs, err)
	}
	for _, mp := range mountsUnder(p.node()) {
		if err := unmountDetach(mp); err != nil {
			errs = append(errs, err)
		}
	}
	if len(mountsUnder(p.node())) == 0 {
		for _, sub := range []string{"pods", "dns", "config"} {
			_ = os.RemoveAll(p.node(sub))
		}
		if !keepPVCs {
			_ = os.RemoveAll(p.node())
			_ = os.Remove(filepath.Join(p.dir, "outside-url"))
			_ = os.Remove(filepath.Join(p.dir, "outside-url-ip"))
		}
	}
	return errs
}

func unmountDetach(mp string) error { return unix.Unmount(mp, unix.MNT_DETACH) }
