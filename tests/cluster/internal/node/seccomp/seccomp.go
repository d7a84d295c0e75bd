// Package seccomp is the local node's RuntimeDefault seccomp profile: a classic-BPF filter
// with containerd's default profile's denials (learnt from contrib/seccomp in containerd,
// not copied): everything is allowed except the system calls that reach past a container
// (kernel keyrings, modules, mounts, namespaces, tracing, clocks), which fail with EPERM
// unless the container keeps the capability that containerd's profile lets them through
// with. It has no Kubernetes dependency, so the static exec helper links it too.
package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// always stands for "no capability lets this call through".
const always = -1

// denial is a set of system calls refused unless the container keeps capability cap.
type denial struct {
	cap   int
	errno unix.Errno
	calls []uint32
}

// denials is the amd64 table. clone with namespace flags is handled apart (an argument check).
var denials = []denial{
	{always, unix.EPERM, []uint32{
		unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL, unix.SYS_USERFAULTFD,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_PIVOT_ROOT,
		unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS,
		unix.SYS__SYSCTL, unix.SYS_NFSSERVCTL,
	}},
	{unix.CAP_SYS_ADMIN, unix.EPERM, []uint32{
		unix.SYS_BPF, unix.SYS_FANOTIFY_INIT, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_MOUNT,
		unix.SYS_UMOUNT2, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_PERF_EVENT_OPEN, unix.SYS_QUOTACTL,
		unix.SYS_SETDOMAINNAME, unix.SYS_SETHOSTNAME, unix.SYS_SETNS, unix.SYS_UNSHARE,
		unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
		unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	}},
	// clone3's flags sit behind a pointer a filter cannot read: ENOSYS makes libc fall back
	// to clone, whose flags the filter checks (as containerd does).
	{unix.CAP_SYS_ADMIN, unix.ENOSYS, []uint32{unix.SYS_CLONE3}},
	{unix.CAP_SYS_BOOT, unix.EPERM, []uint32{unix.SYS_REBOOT}},
	{unix.CAP_SYS_CHROOT, unix.EPERM, []uint32{unix.SYS_CHROOT}},
	{unix.CAP_SYS_MODULE, unix.EPERM, []uint32{unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE}},
	{unix.CAP_SYS_PACCT, unix.EPERM, []uint32{unix.SYS_ACCT}},
	{unix.CAP_SYS_PTRACE, unix.EPERM, []uint32{
		unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP,
	}},
	{unix.CAP_SYS_RAWIO, unix.EPERM, []uint32{unix.SYS_IOPL, unix.SYS_IOPERM}},
	{unix.CAP_SYS_TIME, unix.EPERM, []uint32{unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME}},
	{unix.CAP_SYS_TTY_CONFIG, unix.EPERM, []uint32{unix.SYS_VHANGUP}},
	{unix.CAP_SYSLOG, unix.EPERM, []uint32{unix.SYS_SYSLOG}},
	{unix.CAP_DAC_READ_SEARCH, unix.EPERM, []uint32{unix.SYS_OPEN_BY_HANDLE_AT}},
}

// newNamespaces are the clone flags that make a namespace: refused without CAP_SYS_ADMIN.
const newNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// x32Bit marks the x32 ABI's system call numbers, which share AUDIT_ARCH_X86_64: without
// this check `mount | x32Bit` would slip past every comparison below.
const x32Bit = 0x40000000

// Offsets into struct seccomp_data.
const (
	offNr    = 0
	offArch  = 4
	offArg0  = 16 // low 32 bits on little-endian amd64; clone's flags fit in them
	retAllow = unix.SECCOMP_RET_ALLOW
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

func retErrno(e unix.Errno) unix.SockFilter {
	return stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|(uint32(e)&unix.SECCOMP_RET_DATA))
}

// Program is the default filter for a container whose bounding set holds caps (capability
// numbers). Each denied call is one compare and one return, so no jump is out of range.
func Program(caps []int) []unix.SockFilter {
	kept := map[int]bool{}
	for _, c := range caps {
		kept[c] = true
	}
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	)
	prog := []unix.SockFilter{
		stmt(ldAbs, offArch),
		jump(jeq, unix.AUDIT_ARCH_X86_64, 1, 0),
		retErrno(unix.EPERM), // i386 (int 0x80) and any other ABI: nothing gets through
		stmt(ldAbs, offNr),
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, x32Bit, 0, 1),
		retErrno(unix.EPERM),
	}
	for _, d := range denials {
		if d.cap != always && kept[d.cap] {
			continue
		}
		for _, nr := range d.calls {
			prog = append(prog, jump(jeq, nr, 0, 1), retErrno(d.errno))
		}
	}
	if !kept[unix.CAP_SYS_ADMIN] {
		prog = append(prog,
			jump(jeq, unix.SYS_CLONE, 0, 3),
			stmt(ldAbs, offArg0),
			jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, newNamespaces, 0, 1),
			retErrno(unix.EPERM))
	}
	return append(prog, stmt(unix.BPF_RET|unix.BPF_K, retAllow))
}

// Install puts the default filter on every thread of the calling process (TSYNC), so
// whichever thread execs next carries it into the container's command. Without
// CAP_SYS_ADMIN the kernel wants no_new_privs first; with it (root, before the identity
// switch) no_new_privs stays as the container asked, as with runc.
func Install(caps []int) error {
	if runtime.GOARCH != "amd64" {
		return errors.New("seccomp RuntimeDefault: the local node's filter is for amd64 only")
	}
	if !hasSysAdmin() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("seccomp: no_new_privs: %w", err)
		}
	}
	prog := Program(caps)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: install filter: %w", errno)
	}
	if r != 0 { // with TSYNC, a positive result names a thread that could not be synced
		return fmt.Errorf("seccomp: install filter: thread %d could not take it", r)
	}
	return nil
}

func hasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}
