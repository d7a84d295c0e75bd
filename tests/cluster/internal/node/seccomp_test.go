package node

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"rossoctl.dev/localcluster/internal/node/seccomp"
)

func seccompPod(pod, ctr *v1.SeccompProfile, privileged bool) (*v1.Pod, *v1.Container) {
	p := &v1.Pod{}
	if pod != nil {
		p.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: pod}
	}
	c := &v1.Container{Name: "main"}
	if ctr != nil || privileged {
		c.SecurityContext = &v1.SecurityContext{SeccompProfile: ctr, Privileged: &privileged}
	}
	return p, c
}

func TestSeccompProfileSelection(t *testing.T) {
	rd := &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}
	un := &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}
	lh := &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: &[]string{"profiles/audit.json"}[0]}
	for _, tc := range []struct {
		name       string
		pod, ctr   *v1.SeccompProfile
		privileged bool
		want       string
		wantErr    string
	}{
		{name: "nothing set: the kubelet's default, Unconfined", want: ""},
		{name: "pod RuntimeDefault", pod: rd, want: seccompRuntimeDefault},
		{name: "container RuntimeDefault", ctr: rd, want: seccompRuntimeDefault},
		{name: "container Unconfined over pod RuntimeDefault", pod: rd, ctr: un, want: ""},
		{name: "container RuntimeDefault over pod Unconfined", pod: un, ctr: rd, want: seccompRuntimeDefault},
		{name: "privileged runs unconfined", pod: rd, privileged: true, want: ""},
		{name: "pod Localhost refused", pod: lh, wantErr: `Localhost "profiles/audit.json"`},
		{name: "container Localhost over pod RuntimeDefault refused", pod: rd, ctr: lh, wantErr: "loads no localhost profiles"},
		{name: "container RuntimeDefault over pod Localhost", pod: lh, ctr: rd, want: seccompRuntimeDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := seccompProfile(seccompPod(tc.pod, tc.ctr, tc.privileged))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %q, %v", tc.wantErr, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// An exec into the container carries its filter too, as runc's exec does.
func TestSeccompExecArgs(t *testing.T) {
	has := func(cfg *InitConfig) bool {
		return strings.Contains(strings.Join(enterRootArgs(cfg, false, []string{"id"}), " "), "--seccomp-default")
	}
	if !has(&InitConfig{Seccomp: seccompRuntimeDefault}) {
		t.Error("RuntimeDefault container: exec lacks --seccomp-default")
	}
	if has(&InitConfig{}) {
		t.Error("unconfined container: exec has --seccomp-default")
	}
}

// runFilter evaluates a classic-BPF seccomp program (the opcodes seccomp.Program uses) on
// one system call, as the kernel would.
func runFilter(t *testing.T, prog []unix.SockFilter, arch, nr uint32, arg0 uint64) uint32 {
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], arch)
	binary.LittleEndian.PutUint64(data[16:], arg0)
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			cond := map[uint16]bool{unix.BPF_JEQ: a == in.K, unix.BPF_JGE: a >= in.K, unix.BPF_JSET: a&in.K != 0}[in.Code&0xf0]
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("pc %d: opcode %#x not understood", pc, in.Code)
		}
	}
	t.Fatal("program ran off its end")
	return 0
}

func TestSeccompProgramDecisions(t *testing.T) {
	const x86 = unix.AUDIT_ARCH_X86_64
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	enosys := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	def := capNumbers(defaultCaps)
	withPtrace := append(append([]int{}, def...), unix.CAP_SYS_PTRACE, unix.CAP_SYS_ADMIN)
	for _, tc := range []struct {
		name string
		caps []int
		arch uint32
		nr   uint32
		arg0 uint64
		want uint32
	}{
		{"add_key", def, x86, unix.SYS_ADD_KEY, 0, eperm},
		{"keyctl", def, x86, unix.SYS_KEYCTL, 0, eperm},
		{"keyctl through the x32 ABI", def, x86, unix.SYS_KEYCTL | 0x40000000, 0, eperm},
		{"getpid", def, x86, unix.SYS_GETPID, 0, allow},
		{"personality", def, x86, unix.SYS_PERSONALITY, 0, allow},
		{"chroot with the default SYS_CHROOT", def, x86, unix.SYS_CHROOT, 0, allow},
		{"chroot with capabilities dropped", nil, x86, unix.SYS_CHROOT, 0, eperm},
		{"mount", def, x86, unix.SYS_MOUNT, 0, eperm},
		{"unshare", def, x86, unix.SYS_UNSHARE, 0, eperm},
		{"setns", def, x86, unix.SYS_SETNS, 0, eperm},
		{"bpf", def, x86, unix.SYS_BPF, 0, eperm},
		{"ptrace", def, x86, unix.SYS_PTRACE, 0, eperm},
		{"clock_settime", def, x86, unix.SYS_CLOCK_SETTIME, 0, eperm},
		{"clone for a thread", def, x86, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_THREAD, allow},
		{"clone into a user namespace", def, x86, unix.SYS_CLONE, unix.CLONE_NEWUSER, eperm},
		{"clone3 falls back", def, x86, unix.SYS_CLONE3, 0, enosys},
		{"i386 ABI", def, unix.AUDIT_ARCH_I386, unix.SYS_GETPID, 0, eperm},
		{"ptrace with SYS_PTRACE", withPtrace, x86, unix.SYS_PTRACE, 0, allow},
		{"mount with SYS_ADMIN", withPtrace, x86, unix.SYS_MOUNT, 0, allow},
		{"clone into a namespace with SYS_ADMIN", withPtrace, x86, unix.SYS_CLONE, unix.CLONE_NEWNS, allow},
		{"keyctl even with SYS_ADMIN", withPtrace, x86, unix.SYS_KEYCTL, 0, eperm},
	} {
		if got := runFilter(t, seccomp.Program(tc.caps), tc.arch, tc.nr, tc.arg0); got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// seccompChildEnv makes the re-executed test binary install the filter and report.
const seccompChildEnv = "ROSSOCTL_SECCOMP_CHILD"

func TestSeccompDefaultFilterInChild(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the node's filter is for amd64")
	}
	for _, mode := range []string{"root", "nobody"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "nobody" && os.Geteuid() != 0 {
				t.Skip("needs root to become nobody")
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSeccompChild$", "-test.v")
			cmd.Env = append(os.Environ(), seccompChildEnv+"="+mode)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			for _, want := range []string{"Seccomp: 2", "add_key: operation not permitted",
				"keyctl: operation not permitted", "unshare: operation not permitted", "getpid: ok"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("child output lacks %q:\n%s", want, out)
				}
			}
			// Without CAP_SYS_ADMIN the kernel wants no_new_privs; as root it stays unset.
			nnp := map[string]string{"root": "NoNewPrivs: 0", "nobody": "NoNewPrivs: 1"}[mode]
			if !strings.Contains(string(out), nnp) {
				t.Errorf("child output lacks %q:\n%s", nnp, out)
			}
		})
	}
}

// TestSeccompChild is the child's side; it does nothing in a normal run.
func TestSeccompChild(t *testing.T) {
	mode := os.Getenv(seccompChildEnv)
	if mode == "" {
		t.Skip("run by TestSeccompDefaultFilterInChild")
	}
	runtime.LockOSThread()
	if mode == "nobody" {
		if err := syscall.Setuid(65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := seccomp.Install(capNumbers(defaultCaps)); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "Seccomp:") || strings.HasPrefix(line, "NoNewPrivs:") {
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	report := func(name string, nr uintptr, args ...uintptr) {
		a := append(args, 0, 0, 0, 0, 0, 0)
		_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e == 0 {
			fmt.Printf("%s: ok\n", name)
		} else {
			fmt.Printf("%s: %v\n", name, error(e))
		}
	}
	typ, desc := []byte("user\x00"), []byte("rossoctl-seccomp-test\x00")
	processRing, sessionRing := unix.KEY_SPEC_PROCESS_KEYRING, unix.KEY_SPEC_SESSION_KEYRING
	report("add_key", unix.SYS_ADD_KEY, bytePtr(typ), bytePtr(desc), 0, 0, uintptr(processRing))
	report("keyctl", unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(sessionRing), 0)
	report("unshare", unix.SYS_UNSHARE, unix.CLONE_NEWUSER)
	report("getpid", unix.SYS_GETPID)
}

func bytePtr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
