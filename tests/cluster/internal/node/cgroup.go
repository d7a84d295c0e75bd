package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroupControllers are the v1 hierarchies a container is placed in.
var cgroupControllers = []string{"memory", "cpu", "pids"}

func cgroupDir(ctl, podUID, ctr string) string {
	return filepath.Join(cgroupRoot, ctl, "rossoctl", podUID, ctr)
}

// makeCgroups creates the container's cgroups and writes its limits; it returns the dirs
// by controller. A controller that is not mounted is skipped, not fatal.
func makeCgroups(podUID string, c *v1.Container) (map[string]string, error) {
	dirs := map[string]string{}
	for _, ctl := range cgroupControllers {
		if _, err := os.Stat(filepath.Join(cgroupRoot, ctl)); err != nil {
			continue
		}
		dir := cgroupDir(ctl, podUID, c.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		dirs[ctl] = dir
	}
	lim, req := c.Resources.Limits, c.Resources.Requests
	write := func(ctl, file, value string) error {
		dir, ok := dirs[ctl]
		if !ok {
			return nil
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
			return fmt.Errorf("%s/%s=%s: %w", ctl, file, value, err)
		}
		return nil
	}
	if q, ok := lim[v1.ResourceMemory]; ok && !q.IsZero() {
		if err := write("memory", "memory.limit_in_bytes", strconv.FormatInt(q.Value(), 10)); err != nil {
			return dirs, err
		}
	}
	if q, ok := lim[v1.ResourceCPU]; ok && !q.IsZero() {
		quota := q.MilliValue() * 100 // period 100ms: 1000m = 100000us
		if quota < 1000 {
			quota = 1000
		}
		if err := write("cpu", "cpu.cfs_period_us", "100000"); err != nil {
			return dirs, err
		}
		if err := write("cpu", "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)); err != nil {
			return dirs, err
		}
	}
	shares := int64(2)
	if q, ok := req[v1.ResourceCPU]; ok {
		shares = max(q.MilliValue()*1024/1000, 2)
	} else if q, ok := lim[v1.ResourceCPU]; ok {
		shares = max(q.MilliValue()*1024/1000, 2)
	}
	if err := write("cpu", "cpu.shares", strconv.FormatInt(shares, 10)); err != nil {
		return dirs, err
	}
	// A fork bomb in one sandbox must not take the machine down.
	return dirs, write("pids", "pids.max", "4096")
}

// oomKilled reports whether the kernel OOM-killed something in the container's cgroup.
func oomKilled(dirs map[string]string) bool {
	dir, ok := dirs["memory"]
	if !ok {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// cgroupPIDs lists every process in the container's cgroups (including exec'd ones).
func cgroupPIDs(dirs map[string]string) []int {
	seen := map[int]bool{}
	var out []int
	for _, dir := range dirs {
		data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// removeCgroupTree kills what is left in a pod's cgroups and removes them, deepest first.
func removeCgroupTree(podUID string) {
	for _, ctl := range cgroupControllers {
		removeCgroupDir(filepath.Join(cgroupRoot, ctl, "rossoctl", podUID))
	}
}

func removeCgroupDir(root string) {
	var dirs []string
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		for try := 0; try < 50; try++ {
			killCgroupProcs(dirs[i])
			if err := os.Remove(dirs[i]); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func killCgroupProcs(dir string) {
	for _, pid := range cgroupPIDs(map[string]string{"x": dir}) {
		_ = killPID(pid)
	}
}
