package nft

import (
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	tcp = corev1.ProtocolTCP
	udp = corev1.ProtocolUDP
)

func pol(ns, name string, sel map[string]string, types []networkingv1.PolicyType) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: sel}, PolicyTypes: types}}
}

func testConfig() Config {
	return Config{
		Table: "rossoctl_test", Bridge: "br-test", HostIP: "10.244.0.1", PodCIDR: "10.244.0.0/24",
		Reachable: []string{"10.244.0.0/24", "10.245.0.0/24"}, OutsideNet: "10.245.0.0/24", ServiceNet: "10.96.0.0/16",
		Pods: []Pod{
			{Namespace: "p1", Name: "a", IP: "10.244.0.5", Labels: map[string]string{"app": "a"}, Ready: true},
			{Namespace: "p1", Name: "b", IP: "10.244.0.6", Labels: map[string]string{"app": "b"}, Ready: true,
				Ports: []Port{{Name: "http", Protocol: "TCP", Port: 8080}}},
			{Namespace: "kube-system", Name: "dns", IP: "10.244.0.2", Labels: map[string]string{"k8s-app": "kube-dns"}, Ready: true},
		},
		Namespaces: map[string]map[string]string{
			"p1": {"kubernetes.io/metadata.name": "p1"}, "kube-system": {"kubernetes.io/metadata.name": "kube-system"},
		},
	}
}

func TestUnselectedPodsAreNotIsolated(t *testing.T) {
	c := testConfig()
	in, eg := Compute(c.Pods, c.Namespaces, nil)
	if len(in) != 0 || len(eg) != 0 {
		t.Fatalf("no policy must isolate nothing: %v %v", in, eg)
	}
}

func TestDefaultDenyAndAllowDNS(t *testing.T) {
	c := testConfig()
	deny := pol("p1", "default-deny", nil, []networkingv1.PolicyType{"Ingress", "Egress"})
	dns := pol("p1", "allow-dns", nil, []networkingv1.PolicyType{"Egress"})
	dns.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: ptrPort(53)}, {Protocol: &tcp, Port: ptrPort(53)}},
	}}
	c.Policies = []*networkingv1.NetworkPolicy{deny, dns}
	in, eg := Compute(c.Pods, c.Namespaces, c.Policies)
	if len(in) != 2 || len(eg) != 2 {
		t.Fatalf("both p1 pods isolated both ways, got in=%d eg=%d", len(in), len(eg))
	}
	if len(in[0].Rules) != 0 {
		t.Fatalf("default deny ingress has no allow rules: %+v", in[0].Rules)
	}
	if r := eg[0].Rules; len(r) != 1 || len(r[0].Peers) != 1 || r[0].Peers[0] != "10.244.0.2" || len(r[0].Ports) != 2 {
		t.Fatalf("allow-dns must allow exactly the dns pod on 53: %+v", r)
	}
	out := Render(c)
	for _, want := range []string{
		"ip saddr 10.244.0.5 jump eg-10-244-0-5",
		"ip daddr { 10.244.0.2 } meta l4proto udp th dport 53 return",
		"ip daddr 10.244.0.6 jump in-10-244-0-6",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "jump eg-10-244-0-2") {
		t.Error("kube-system pod must not be isolated by a p1 policy")
	}
	nftCheck(t, out)
}

func TestIPBlockExceptAndNamedPort(t *testing.T) {
	c := testConfig()
	p := pol("p1", "allow", map[string]string{"app": "a"}, []networkingv1.PolicyType{"Egress"})
	p.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.245.0.0/24", Except: []string{"10.245.0.99/32"}}}}},
		{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}}}},
			Ports: []networkingv1.NetworkPolicyPort{{Port: &intstr.IntOrString{Type: intstr.String, StrVal: "http"}}}},
	}
	c.Policies = []*networkingv1.NetworkPolicy{p}
	out := Render(c)
	for _, want := range []string{
		"ip daddr 10.245.0.0/24 ip daddr != { 10.245.0.99/32 } return",
		"ip daddr { 10.244.0.6 } meta l4proto tcp th dport 8080 return",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "jump eg-10-244-0-6") || strings.Contains(out, "jump in-") {
		t.Error("only pod a, egress only, is isolated")
	}
	nftCheck(t, out)
}

func TestPolicyTypesDefaulting(t *testing.T) {
	c := testConfig()
	p := pol("p1", "ing", map[string]string{"app": "b"}, nil) // no types, no egress rules: Ingress only
	c.Policies = []*networkingv1.NetworkPolicy{p}
	in, eg := Compute(c.Pods, c.Namespaces, c.Policies)
	if len(in) != 1 || len(eg) != 0 {
		t.Fatalf("want ingress-only isolation of b: in=%d eg=%d", len(in), len(eg))
	}
	// An empty from (allow all) rule plus deny is the union: allow all.
	p.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{}}
	in, _ = Compute(c.Pods, c.Namespaces, c.Policies)
	if len(in[0].Rules) != 1 || !in[0].Rules[0].Any {
		t.Fatalf("empty rule must allow every peer: %+v", in[0].Rules)
	}
}

func TestServiceDNAT(t *testing.T) {
	c := testConfig()
	c.Pods = append(c.Pods, Pod{Namespace: "kube-system", Name: "dns2", IP: "10.244.0.3", Labels: map[string]string{"k8s-app": "kube-dns"}, Ready: true})
	c.Services = []Service{{Namespace: "kube-system", Name: "kube-dns", ClusterIP: "10.96.0.10",
		Selector: map[string]string{"k8s-app": "kube-dns"},
		Ports:    []corev1.ServicePort{{Protocol: udp, Port: 53, TargetPort: intstr.FromInt32(53)}}},
		{Namespace: "p1", Name: "web", ClusterIP: "10.96.0.20", Selector: map[string]string{"app": "b"},
			Ports: []corev1.ServicePort{{Protocol: tcp, Port: 80, TargetPort: intstr.FromString("http")}}}}
	out := Render(c)
	for _, want := range []string{
		"ip daddr 10.96.0.10 meta l4proto udp th dport 53 numgen random mod 2 vmap",
		"dnat ip to 10.244.0.2:53",
		"ip daddr 10.96.0.20 meta l4proto tcp th dport 80 dnat ip to 10.244.0.6:8080",
		"ip saddr 10.244.0.0/24 ip daddr != { 10.244.0.0/24, 10.245.0.0/24 } counter drop",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	nftCheck(t, out)
}

func ptrPort(p int32) *intstr.IntOrString { v := intstr.FromInt32(p); return &v }

// nftCheck asks nft to parse the script without loading it, where nft is usable.
func nftCheck(t *testing.T, script string) {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nft not installed")
	}
	cmd := exec.Command("nft", "-c", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "Operation not permitted") {
			t.Skip("nft -c needs privileges")
		}
		t.Fatalf("nft rejects the script: %v\n%s\n%s", err, out, script)
	}
}
