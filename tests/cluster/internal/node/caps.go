package node

import (
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// capNames maps capability names (as in securityContext, without CAP_) to numbers.
var capNames = map[string]int{
	"CHOWN": unix.CAP_CHOWN, "DAC_OVERRIDE": unix.CAP_DAC_OVERRIDE, "DAC_READ_SEARCH": unix.CAP_DAC_READ_SEARCH,
	"FOWNER": unix.CAP_FOWNER, "FSETID": unix.CAP_FSETID, "KILL": unix.CAP_KILL, "SETGID": unix.CAP_SETGID,
	"SETUID": unix.CAP_SETUID, "SETPCAP": unix.CAP_SETPCAP, "LINUX_IMMUTABLE": unix.CAP_LINUX_IMMUTABLE,
	"NET_BIND_SERVICE": unix.CAP_NET_BIND_SERVICE, "NET_BROADCAST": unix.CAP_NET_BROADCAST,
	"NET_ADMIN": unix.CAP_NET_ADMIN, "NET_RAW": unix.CAP_NET_RAW, "IPC_LOCK": unix.CAP_IPC_LOCK,
	"IPC_OWNER": unix.CAP_IPC_OWNER, "SYS_MODULE": unix.CAP_SYS_MODULE, "SYS_RAWIO": unix.CAP_SYS_RAWIO,
	"SYS_CHROOT": unix.CAP_SYS_CHROOT, "SYS_PTRACE": unix.CAP_SYS_PTRACE, "SYS_PACCT": unix.CAP_SYS_PACCT,
	"SYS_ADMIN": unix.CAP_SYS_ADMIN, "SYS_BOOT": unix.CAP_SYS_BOOT, "SYS_NICE": unix.CAP_SYS_NICE,
	"SYS_RESOURCE": unix.CAP_SYS_RESOURCE, "SYS_TIME": unix.CAP_SYS_TIME, "SYS_TTY_CONFIG": unix.CAP_SYS_TTY_CONFIG,
	"MKNOD": unix.CAP_MKNOD, "LEASE": unix.CAP_LEASE, "AUDIT_WRITE": unix.CAP_AUDIT_WRITE,
	"AUDIT_CONTROL": unix.CAP_AUDIT_CONTROL, "SETFCAP": unix.CAP_SETFCAP, "MAC_OVERRIDE": unix.CAP_MAC_OVERRIDE,
	"MAC_ADMIN": unix.CAP_MAC_ADMIN, "SYSLOG": unix.CAP_SYSLOG, "WAKE_ALARM": unix.CAP_WAKE_ALARM,
	"BLOCK_SUSPEND": unix.CAP_BLOCK_SUSPEND, "AUDIT_READ": unix.CAP_AUDIT_READ, "PERFMON": unix.CAP_PERFMON,
	"BPF": unix.CAP_BPF, "CHECKPOINT_RESTORE": unix.CAP_CHECKPOINT_RESTORE,
}

// defaultCaps is the set container runtimes grant by default (containerd/CRI-O).
var defaultCaps = []string{"CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID",
	"SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE"}

// containerCaps is the capability bounding set of a container: defaults plus add minus
// drop (ALL drops everything), or every capability when privileged.
func containerCaps(sc *v1.SecurityContext) []string {
	set := map[string]bool{}
	if sc != nil && sc.Privileged != nil && *sc.Privileged {
		for name := range capNames {
			set[name] = true
		}
	} else {
		for _, name := range defaultCaps {
			set[name] = true
		}
		if sc != nil && sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Drop {
				name := strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_")
				if name == "ALL" {
					set = map[string]bool{}
				}
				delete(set, name)
			}
			for _, c := range sc.Capabilities.Add {
				set[strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_")] = true
			}
		}
	}
	var out []string
	for name := range set {
		if _, ok := capNames[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// dropBoundingSet removes every capability not kept from the bounding set; after exec a
// root process cannot hold more than that set.
func dropBoundingSet(keep []string) error {
	kept := map[int]bool{}
	for _, name := range keep {
		kept[capNames[name]] = true
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if kept[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return err
		}
	}
	return nil
}

// setprivBounding renders the set for `setpriv --bounding-set`.
func setprivBounding(keep []string) string {
	parts := []string{"-all"}
	for _, name := range keep {
		parts = append(parts, "+"+strings.ToLower(name))
	}
	return strings.Join(parts, ",")
}
