package node

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
)

const outsideNS = "rossoctl-outside"

// run runs a host tool and folds its stderr into the error.
func run(stdin string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func sysctl(key, value string) error {
	return os.WriteFile("/proc/sys/"+strings.ReplaceAll(key, ".", "/"), []byte(value), 0)
}

// setupHostNetwork creates the pod bridge and the outside world's namespace.
func setupHostNetwork() error {
	for k, v := range map[string]string{
		"net.ipv4.ip_forward": "1",
		// Bridged pod-to-pod packets must pass the inet hooks for NetworkPolicy and DNAT.
		"net.bridge.bridge-nf-call-iptables": "1",
	} {
		if err := sysctl(k, v); err != nil {
			return fmt.Errorf("sysctl %s: %w", k, err)
		}
	}
	batch := fmt.Sprintf(`link add %[1]s type bridge
addr add %[2]s/24 dev %[1]s
link set %[1]s up
netns add %[3]s
link add rsout0 type veth peer name eth0 netns %[3]s
addr add %[4]s/24 dev rsout0
link set rsout0 up
`, bridgeName, bridgeIP, outsideNS, outsideGW)
	if err := run(batch, "ip", "-batch", "-"); err != nil {
		return err
	}
	inner := fmt.Sprintf("link set lo up\naddr add %s/24 dev eth0\nlink set eth0 up\nroute add default via %s\n", outsideIP, outsideGW)
	return run(inner, "ip", "-n", outsideNS, "-batch", "-")
}

func podNetNS(uid string) string   { return "rsp-" + uid }
func podVeth(uid string) string    { return "vrs" + strings.ReplaceAll(uid, "-", "")[:10] }
func netnsPath(name string) string { return "/run/netns/" + name }

// setupPodNetwork gives a pod its namespace, a veth on the bridge and an address.
func setupPodNetwork(uid, ip string) error {
	ns, veth := podNetNS(uid), podVeth(uid)
	batch := fmt.Sprintf("netns add %[1]s\nlink add %[2]s type veth peer name eth0 netns %[1]s\nlink set %[2]s master %[3]s up\n", ns, veth, bridgeName)
	if err := run(batch, "ip", "-batch", "-"); err != nil {
		return err
	}
	inner := fmt.Sprintf("link set lo up\naddr add %s/24 dev eth0\nlink set eth0 up\nroute add default via %s\n", ip, bridgeIP)
	return run(inner, "ip", "-n", ns, "-batch", "-")
}

func teardownPodNetwork(uid string) {
	ns := podNetNS(uid)
	killNetnsPIDs(ns)
	_ = run("", "ip", "netns", "del", ns)
	_ = run("", "ip", "link", "del", podVeth(uid))
}

// killNetnsPIDs kills processes still living in a named namespace (nothing of a pod survives).
func killNetnsPIDs(ns string) {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			_ = killPID(pid)
		}
	}
}

// ipam hands out pod addresses from 10.244.0.0/24 (.1 is the bridge).
type ipam struct {
	mu   sync.Mutex
	used map[string]string // ip -> pod uid
}

func newIPAM() *ipam { return &ipam{used: map[string]string{}} }

func (a *ipam) allocate(uid string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, owner := range a.used {
		if owner == uid {
			return ip, nil
		}
	}
	base := net.ParseIP(bridgeIP).To4()
	for i := 2; i < 255; i++ {
		ip := net.IPv4(base[0], base[1], base[2], byte(i)).String()
		if _, taken := a.used[ip]; !taken {
			a.used[ip] = uid
			return ip, nil
		}
	}
	return "", fmt.Errorf("pod CIDR %s exhausted", podCIDR)
}

func (a *ipam) release(uid string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, owner := range a.used {
		if owner == uid {
			delete(a.used, ip)
		}
	}
}
