package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// container is the node's record of one container of a pod.
type container struct {
	spec         v1.Container
	isInit       bool
	restartCount int32
	id           string
	pid          int
	running      bool
	pause        bool // no executable on the host: a pause process keeps it alive
	startedAt    time.Time
	term         *v1.ContainerStateTerminated // current state when exited
	last         *v1.ContainerStateTerminated // previous run, for lastState
	waiting      string                       // waiting reason before first start or after a config error
	waitingMsg   string
	backoff      time.Duration
	cgroups      map[string]string
	probes       probes
	cfg          *InitConfig
	cfgPath      string
	termPath     string
	done         chan struct{}
	image        *image    // what the last pull resolved
	pull         pullState // back-off after a failed pull
}

func (c *container) logPath(p paths, podUID string, restart int32) string {
	return p.pod(podUID, "logs", c.spec.Name, strconv.Itoa(int(restart))+".log")
}

// resolveCommand finds the container's executable on the host filesystem as the container
// will see it; a missing executable means the container runs a pause process.
func resolveCommand(c *v1.Container, env []string, mounts []Mount) ([]string, bool) {
	args := append(append([]string{}, c.Command...), c.Args...)
	if len(args) == 0 {
		return []string{"/usr/bin/sleep", "infinity"}, true
	}
	visible := func(p string) (string, bool) {
		host := ""
		for _, m := range mounts {
			if rest, ok := strings.CutPrefix(p, m.Target); ok && (rest == "" || rest[0] == '/') {
				host = m.Source + rest
			}
		}
		if host == "" {
			top := strings.Split(strings.TrimPrefix(p, "/"), "/")[0]
			if !contains(hostDirs, top) {
				return "", false
			}
			host = p
		}
		fi, err := os.Stat(host)
		return p, err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	if strings.Contains(args[0], "/") {
		if _, ok := visible(args[0]); ok && filepath.IsAbs(args[0]) {
			return args, false
		}
		return []string{"/usr/bin/sleep", "infinity"}, true
	}
	path := defaultPath
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if p, ok := visible(filepath.Join(dir, args[0])); ok {
			args[0] = p
			return args, false
		}
	}
	return []string{"/usr/bin/sleep", "infinity"}, true
}

// identity applies pod- then container-level securityContext; runAsNonRoot is checked
// against the uid the process will really have (root when nothing says otherwise).
func identity(pod *v1.Pod, c *v1.Container, img *image) (uid, gid uint32, groups []uint32, err error) {
	var runAsUser, runAsGroup *int64
	var nonRoot *bool
	if psc := pod.Spec.SecurityContext; psc != nil {
		runAsUser, runAsGroup, nonRoot = psc.RunAsUser, psc.RunAsGroup, psc.RunAsNonRoot
		if psc.FSGroup != nil {
			groups = append(groups, uint32(*psc.FSGroup))
		}
		for _, g := range psc.SupplementalGroups {
			groups = append(groups, uint32(g))
		}
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			runAsUser = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			runAsGroup = sc.RunAsGroup
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
	}
	imgUID, imgGID, named, err := imageUser(img)
	if err != nil {
		return 0, 0, nil, err
	}
	uid, gid = imgUID, imgGID
	if runAsUser != nil {
		uid = uint32(*runAsUser)
		gid = uid // the image's passwd names its primary group, else its own id
		if pgid, ok := passwdGID(img.rootfs, uid); ok && !img.host {
			gid = pgid
		}
	}
	if runAsGroup != nil {
		gid = uint32(*runAsGroup)
	}
	if isTrue(nonRoot) {
		switch {
		case runAsUser == nil && named:
			return 0, 0, nil, fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", img.config.User, podRef(pod), c.Name)
		case runAsUser == nil && uid == 0:
			return 0, 0, nil, fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podRef(pod), c.Name)
		case uid == 0:
			return 0, 0, nil, errors.New("container's runAsUser breaks non-root policy")
		}
	}
	return uid, gid, groups, nil
}

// start launches `node init` in new PID/mount/UTS/IPC namespaces; it becomes the container.
func (w *podWorker) start(ctx context.Context, pod *v1.Pod, c *container) error {
	uid := string(pod.UID)
	img, err := w.pullImage(pod, c)
	if err != nil {
		return err
	}
	env, err := w.containerEnv(ctx, pod, &c.spec)
	if err != nil {
		return &configError{err}
	}
	env = imageEnv(img, env, specEnvNames(&c.spec))
	u, g, groups, err := identity(pod, &c.spec, img)
	if err != nil {
		return &configError{err}
	}
	mounts, err := w.containerMounts(pod, c)
	if err != nil {
		return &configError{err}
	}
	seccomp, err := seccompProfile(pod, &c.spec)
	if err != nil {
		return &configError{err}
	}
	var args []string
	pause := false
	if img.host {
		args, pause = resolveCommand(&c.spec, env, mounts)
	} else if args = commandLine(&c.spec, img); len(args) == 0 {
		return errors.New("failed to generate container spec: no command specified")
	}
	upper, err := w.containerLayer(uid, c, img)
	if err != nil {
		return err
	}
	cwd := c.spec.WorkingDir
	if cwd == "" {
		cwd = img.config.WorkingDir
	}
	cg, err := makeCgroups(uid, &c.spec)
	if err != nil {
		return err
	}
	sc := c.spec.SecurityContext
	netns := netnsPath(podNetNS(uid))
	if pod.Spec.HostNetwork {
		netns = ""
	}
	cfg := &InitConfig{
		Rootfs: w.m.paths.pod(uid, "rootfs"), NetNS: netns, Hostname: podHostname(pod),
		Image: imageRoot(img), Layer: upper,
		Args: args, Env: env, Cwd: cwd, UID: u, GID: g, Groups: groups,
		NoNewPrivs:   sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
		ReadOnlyRoot: sc != nil && isTrue(sc.ReadOnlyRootFilesystem),
		Mounts:       mounts, Cgroups: cg, Caps: containerCaps(sc), Seccomp: seccomp,
	}
	cfgPath := w.m.paths.pod(uid, "config", c.spec.Name+".json")
	_ = os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	_ = os.MkdirAll(cfg.Rootfs, 0o755)
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		return err
	}
	logPath := c.logPath(w.m.paths, uid, c.restartCount)
	_ = os.MkdirAll(filepath.Dir(logPath), 0o755)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(w.m.self, "node", "init", "--config", cfgPath)
	cmd.Args[0] = "localcluster"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setsid:     true,
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC,
	}
	// The child holds the write end until its exec (close-on-exec there), so EOF on the read
	// end means the container's root is in place: before it, an exec would see the host's root.
	started, startedW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer started.Close()
	cmd.ExtraFiles = []*os.File{startedW}
	_ = os.Remove(cfgPath + ".err") // a previous attempt's; the child writes its own
	err = cmd.Start()
	startedW.Close()
	if err != nil {
		return err
	}
	_ = started.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, _ = io.Copy(io.Discard, started)
	c.cfg, c.cfgPath, c.cgroups, c.pause, c.image = cfg, cfgPath, cg, pause, img
	c.pid, c.running, c.startedAt = cmd.Process.Pid, true, time.Now()
	c.id = fmt.Sprintf("%s-%s-%d", uid[:8], c.spec.Name, c.restartCount)
	c.term, c.waiting, c.waitingMsg, c.probes = nil, "", "", probes{}
	c.done = make(chan struct{})
	go w.wait(cmd, c, c.done, logPath)
	return nil
}

type configError struct{ error }

// wait records how the container's PID 1 ended and wakes the pod worker.
func (w *podWorker) wait(cmd *exec.Cmd, c *container, done chan struct{}, logPath string) {
	err := cmd.Wait()
	code := int32(0)
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case st.Exited():
			code = int32(st.ExitStatus())
		case st.Signaled():
			code = 128 + int32(st.Signal())
		}
	} else if err != nil {
		code = 128
	}
	w.mu.Lock()
	t := &v1.ContainerStateTerminated{ExitCode: code, Reason: "Completed", ContainerID: "rossoctl://" + c.id}
	if code != 0 {
		t.Reason = "Error"
	}
	if oomKilled(c.cgroups) && code == 137 {
		t.Reason = "OOMKilled"
	}
	if msg, err := os.ReadFile(c.cfgPath + ".err"); err == nil {
		t.Reason, t.Message = "StartError", strings.TrimSpace(string(msg))
	} else {
		t.Message = terminationMessage(c, logPath, code)
	}
	t.StartedAt, t.FinishedAt = metav1.NewTime(c.startedAt), metav1.Now()
	c.running, c.term = false, t
	w.mu.Unlock()
	close(done)
	w.wake()
}

// terminationMessage reads what the container left at terminationMessagePath, or the
// tail of its log when the policy says so and it failed.
func terminationMessage(c *container, logPath string, code int32) string {
	data, _ := os.ReadFile(c.termPath)
	if len(data) == 0 && code != 0 && c.spec.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError {
		data, _ = os.ReadFile(logPath)
		if lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n"); len(lines) > 80 {
			data = []byte(strings.Join(lines[len(lines)-80:], "\n"))
		}
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return string(data)
}

// containerMounts are the container's volumeMounts plus the per-pod /etc files.
func (w *podWorker) containerMounts(pod *v1.Pod, c *container) ([]Mount, error) {
	uid := string(pod.UID)
	var out []Mount
	for _, name := range []string{"hosts", "resolv.conf", "hostname"} {
		out = append(out, Mount{Source: w.m.paths.pod(uid, "etc", name), Target: "/etc/" + name})
	}
	c.termPath = w.m.paths.pod(uid, "termination", c.spec.Name)
	_ = os.MkdirAll(filepath.Dir(c.termPath), 0o755)
	if err := os.WriteFile(c.termPath, nil, 0o666); err != nil {
		return nil, err
	}
	_ = os.Chmod(c.termPath, 0o666)
	tp := c.spec.TerminationMessagePath
	if tp == "" {
		tp = "/dev/termination-log"
	}
	out = append(out, Mount{Source: c.termPath, Target: tp})
	for _, vm := range c.spec.VolumeMounts {
		v, ok := w.volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume %q is not set up", vm.Name)
		}
		src := v.path
		if vm.SubPath != "" {
			src = filepath.Join(v.path, filepath.Clean("/"+vm.SubPath))
			if _, err := os.Stat(src); os.IsNotExist(err) {
				_ = os.MkdirAll(src, 0o777)
			}
		}
		out = append(out, Mount{Source: src, Target: vm.MountPath, ReadOnly: vm.ReadOnly || v.readOnly})
	}
	return out, nil
}

// stop ends a container: SIGTERM, then SIGKILL after the grace period. A PID 1 without a
// SIGTERM handler would never see SIGTERM, so it is killed at once.
func (w *podWorker) stop(c *container, grace time.Duration) {
	w.mu.Lock()
	pid, running, done, pause := c.pid, c.running, c.done, c.pause
	w.mu.Unlock()
	if !running {
		return
	}
	if pause || !handlesSIGTERM(pid) {
		grace = 0
	}
	if grace > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-done:
			return
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, p := range cgroupPIDs(c.cgroups) {
		_ = killPID(p)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

func handlesSIGTERM(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return mask&(1<<(uint(syscall.SIGTERM)-1)) != 0
		}
	}
	return false
}

func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
