package node

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"rossoctl.dev/localcluster/internal/node/nft"
)

// TestHostNetworkRoundTrip builds the bridge, the outside world and one pod namespace,
// checks reachability with and without a deny policy, then checks cleanup leaves nothing.
// It changes the host, so it runs only as root with ROSSOCTL_NODE_ROOT_TESTS=1 and a
// binary of this package's devmain in NODE_TEST_BIN.
func TestHostNetworkRoundTrip(t *testing.T) {
	bin := os.Getenv("NODE_TEST_BIN")
	if os.Geteuid() != 0 || os.Getenv("ROSSOCTL_NODE_ROOT_TESTS") != "1" || bin == "" {
		t.Skip("needs root, ROSSOCTL_NODE_ROOT_TESTS=1 and NODE_TEST_BIN")
	}
	if exec.Command("ip", "link", "show", bridgeName).Run() == nil {
		t.Skip("a local node is running on this host; not touching its network")
	}
	p := paths{t.TempDir()}
	_ = os.MkdirAll(filepath.Join(p.dir, "logs"), 0o755)
	_ = os.MkdirAll(p.node(), 0o755)
	cleanupHost(p, false)
	if err := setupHostNetwork(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if errs := cleanupHost(p, false); len(errs) > 0 {
			t.Errorf("cleanup: %v", errs)
		}
		out, _ := exec.Command("sh", "-c", "ip -o link; ip netns list; nft list tables; grep rossoctl /etc/hosts; ls /sys/fs/cgroup/memory | grep rossoctl").CombinedOutput()
		for _, bad := range []string{bridgeName, "rsp-", outsideNS, "vrs", nftTable} {
			if strings.Contains(string(out), bad) {
				t.Errorf("left behind %q:\n%s", bad, out)
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go superviseOutside(ctx, p, bin)
	uid := "11111111-2222-3333-4444-555555555555"
	ip := "10.244.0.9"
	if err := setupPodNetwork(uid, ip); err != nil {
		t.Fatal(err)
	}
	pod := nft.Pod{Namespace: "p", Name: "x", IP: ip, Labels: map[string]string{"a": "b"}}
	apply := func(pols ...*networkingv1.NetworkPolicy) {
		script := nft.Render(nft.Config{Table: nftTable, Bridge: bridgeName, HostIP: bridgeIP, PodCIDR: podCIDR,
			Reachable: []string{podCIDR, outsideNet}, OutsideNet: outsideNet, ServiceNet: serviceNet,
			Pods: []nft.Pod{pod}, Policies: pols})
		if err := run(script, "nft", "-f", "-"); err != nil {
			t.Fatal(err)
		}
	}
	apply()
	fetch := func() string {
		cfg := InitConfig{Rootfs: filepath.Join(p.dir, "rootfs"), NetNS: netnsPath(podNetNS(uid)), Hostname: "x",
			Args: []string{"/usr/bin/sh", "-c", "curl -s -m 2 http://10.245.0.10/ || echo FAILED"}, Env: []string{"PATH=/usr/bin"}, UID: 1000, GID: 1000}
		_ = os.MkdirAll(cfg.Rootfs, 0o755)
		data, _ := json.Marshal(cfg)
		cfgPath := filepath.Join(p.dir, "cfg.json")
		_ = os.WriteFile(cfgPath, data, 0o600)
		out, err := exec.Command("unshare", "--mount", "--pid", "--fork", "--uts", "--ipc", bin, "node", "init", "--config", cfgPath).CombinedOutput()
		if err != nil {
			t.Fatalf("init: %v: %s", err, out)
		}
		return string(out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(filepath.Join(p.dir, "outside-url")); err != nil && time.Now().Before(deadline); _, err = os.Stat(filepath.Join(p.dir, "outside-url")) {
		time.Sleep(100 * time.Millisecond)
	}
	if out := fetch(); !strings.Contains(out, "hello from the outside") {
		t.Fatalf("pod should reach outside: %s", out)
	}
	deny := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "deny"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Egress"}}}
	apply(deny)
	if out := fetch(); !strings.Contains(out, "FAILED") {
		t.Fatalf("default-deny egress must block: %s", out)
	}
	allow := deny.DeepCopy()
	allow.Name = "allow"
	allow.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.245.0.10/32"}}}}}
	apply(deny, allow)
	if out := fetch(); !strings.Contains(out, "hello from the outside") {
		t.Fatalf("ipBlock allow must let it through: %s", out)
	}
	teardownPodNetwork(uid)
}
