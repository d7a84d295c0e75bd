package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// ExecInContainer runs cmd in the container's namespaces, cgroups and identity:
// localcluster-supervise join-cgroups joins the cgroups, nsenter the namespaces and root,
// enter-root the identity.
func (s *kubeletServer) ExecInContainer(ctx context.Context, name, _, ctr string, cmdline []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	w, c, err := s.lookup(name, ctr)
	if err != nil {
		return err
	}
	return s.m.execIn(ctx, w, c, cmdline, in, out, errw, tty, resize)
}

// execIn runs a command in a running container (exec requests and exec probes).
func (m *Manager) execIn(ctx context.Context, w *podWorker, c *container, cmdline []string, in io.Reader, out, errw io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	ctr := c.spec.Name
	w.mu.Lock()
	pid, running, cfg, cgroups := c.pid, c.running, c.cfg, c.cgroups
	w.mu.Unlock()
	if !running || cfg == nil {
		return fmt.Errorf("container %q is not running", ctr)
	}
	if len(cmdline) == 0 {
		return errors.New("no command given")
	}
	dirs := make([]string, 0, len(cgroups))
	for _, d := range cgroups {
		dirs = append(dirs, d)
	}
	if err := execLookup(pid, cfg.Env, cmdline[0]); err != nil {
		return err
	}
	// The last step runs the static localcluster-supervise through /proc/self/fd/3 inside the
	// container's namespaces and root, so the image needs none of nsenter, setpriv or env.
	helper, err := os.Open(m.self + "-supervise")
	if err != nil {
		return fmt.Errorf("exec helper: %w", err)
	}
	defer helper.Close()
	args := []string{"join-cgroups", "--cgroups", strings.Join(dirs, ","), "--",
		"/usr/bin/nsenter", "-t", strconv.Itoa(pid), "-n", "-m", "-p", "-u", "-i", "-r", "-w", "--"}
	args = append(args, enterRootArgs(cfg, tty, cmdline)...)
	cmd := exec.CommandContext(ctx, m.self+"-supervise", args...)
	cmd.ExtraFiles = []*os.File{helper}
	cmd.Env = cfg.Env
	cmd.Args[0] = "localcluster-supervise"
	cmd.WaitDelay = 2 * time.Second
	var stdin io.WriteCloser
	if tty {
		master, slave, err := openPTY(fmt.Sprintf("/proc/%d/root/dev/pts", pid))
		if err != nil {
			return err
		}
		defer master.Close()
		_ = slave.Chown(int(cfg.UID), -1)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			slave.Close()
			return err
		}
		slave.Close()
		go func() {
			for size := range resize {
				ws := unix.Winsize{Row: size.Height, Col: size.Width}
				_ = unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &ws)
			}
		}()
		if in != nil {
			go func() { _, _ = io.Copy(master, in) }()
		}
		if out != nil {
			go func() { _, _ = io.Copy(out, master) }()
		}
	} else {
		cmd.Stdout, cmd.Stderr = out, errw
		if in != nil {
			stdin, err = cmd.StdinPipe()
			if err != nil {
				return err
			}
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		if stdin != nil {
			// Not waited for: a client that never closes stdin must not hang the exec.
			go func() { _, _ = io.Copy(stdin, in); stdin.Close() }()
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			code = 128 + int(st.Signal())
		}
		return utilexec.CodeExitError{Err: err, Code: code}
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		return nil
	}
	return err
}

// openPTY allocates the pair in the container's own devpts, so that ttyname() inside the
// container resolves and the terminal belongs to it.
func openPTY(devpts string) (*os.File, *os.File, error) {
	master, err := os.OpenFile(devpts+"/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	unlock := 0
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	slave, err := os.OpenFile(devpts+"/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}
