// Package nft derives the node's nftables ruleset from NetworkPolicies, Services and pods.
// Everything here is a pure function of its inputs so it can be unit-tested without root.
package nft

import (
	"net"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Port is a named container port of a pod.
type Port struct {
	Name     string
	Protocol string // TCP, UDP, SCTP
	Port     int32
}

// Pod is what the rules need to know about a pod with an address on this node.
type Pod struct {
	Namespace, Name, IP string
	Labels              map[string]string
	Ports               []Port
	Ready               bool
}

// Rule is one allow rule of an isolated pod: traffic to/from Peers (nil: anyone), on Ports
// (nil: every port and protocol).
type Rule struct {
	Peers  []string // IPs or CIDRs; "!" prefixed entries are excepts of the CIDR before them
	Blocks []Block
	Ports  []PortRange
	Any    bool // peers unrestricted
}

// Block is an ipBlock: CIDR minus excepts.
type Block struct {
	CIDR   string
	Except []string
}

// PortRange is a protocol with a port range; From == 0 means every port.
type PortRange struct {
	Protocol string
	From, To int32
}

// Isolation is the computed policy for one pod and one direction.
type Isolation struct {
	Pod   Pod
	Rules []Rule
}

func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false // an invalid selector selects nothing
	}
	return s.Matches(labels.Set(l))
}

func hasType(p *networkingv1.NetworkPolicy, t networkingv1.PolicyType) bool {
	if len(p.Spec.PolicyTypes) == 0 {
		// Defaulting as the API server documents it: Ingress always, Egress when rules exist.
		return t == networkingv1.PolicyTypeIngress || (t == networkingv1.PolicyTypeEgress && len(p.Spec.Egress) > 0)
	}
	for _, x := range p.Spec.PolicyTypes {
		if x == t {
			return true
		}
	}
	return false
}

// Compute returns, per direction, the pods isolated for it and their allow rules.
func Compute(pods []Pod, namespaces map[string]map[string]string, policies []*networkingv1.NetworkPolicy) (ingress, egress []Isolation) {
	sorted := append([]Pod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool { return ipLess(sorted[i].IP, sorted[j].IP) })
	for _, pod := range sorted {
		var in, eg *Isolation
		for _, pol := range policies {
			if pol.Namespace != pod.Namespace || !selects(&pol.Spec.PodSelector, pod.Labels) {
				continue
			}
			if hasType(pol, networkingv1.PolicyTypeIngress) {
				if in == nil {
					in = &Isolation{Pod: pod}
				}
				for _, r := range pol.Spec.Ingress {
					in.Rules = append(in.Rules, rule(pol.Namespace, r.From, r.Ports, pod, sorted, namespaces, true)...)
				}
			}
			if hasType(pol, networkingv1.PolicyTypeEgress) {
				if eg == nil {
					eg = &Isolation{Pod: pod}
				}
				for _, r := range pol.Spec.Egress {
					eg.Rules = append(eg.Rules, rule(pol.Namespace, r.To, r.Ports, pod, sorted, namespaces, false)...)
				}
			}
		}
		if in != nil {
			ingress = append(ingress, *in)
		}
		if eg != nil {
			egress = append(egress, *eg)
		}
	}
	return ingress, egress
}

// rule turns one policy rule into allow rules. Named ports resolve against the selected
// pod for ingress and against each peer pod for egress, as the API documents.
func rule(ns string, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort,
	self Pod, pods []Pod, namespaces map[string]map[string]string, ingress bool) []Rule {
	var ips []string
	var blocks []Block
	var peerPods []Pod
	for _, peer := range peers {
		if peer.IPBlock != nil {
			if _, n, err := net.ParseCIDR(peer.IPBlock.CIDR); err == nil && n.IP.To4() != nil {
				b := Block{CIDR: n.String()}
				for _, e := range peer.IPBlock.Except {
					if _, en, err := net.ParseCIDR(e); err == nil && en.IP.To4() != nil {
						b.Except = append(b.Except, en.String())
					}
				}
				blocks = append(blocks, b)
			}
			continue
		}
		for _, p := range pods {
			if peerMatches(ns, peer, p, namespaces) {
				ips = append(ips, p.IP)
				peerPods = append(peerPods, p)
			}
		}
	}
	anyPeer := len(peers) == 0
	if anyPeer {
		peerPods = pods
	}
	named := false
	for _, p := range ports {
		if p.Port != nil && p.Port.Type == 1 {
			named = true
		}
	}
	if !named || ingress {
		pr, ok := portRanges(ports, self)
		if !ok {
			return nil
		}
		r := Rule{Peers: dedupe(ips), Blocks: blocks, Ports: pr, Any: anyPeer}
		if !r.Any && len(r.Peers) == 0 && len(r.Blocks) == 0 {
			return nil
		}
		return []Rule{r}
	}
	// Egress with named ports: one rule per peer pod, with that pod's port numbers.
	var out []Rule
	for _, p := range peerPods {
		if pr, ok := portRanges(ports, p); ok {
			out = append(out, Rule{Peers: []string{p.IP}, Ports: pr})
		}
	}
	if pr, ok := portRanges(numericOnly(ports), Pod{}); ok && len(blocks) > 0 {
		out = append(out, Rule{Blocks: blocks, Ports: pr})
	}
	return out
}

func numericOnly(ports []networkingv1.NetworkPolicyPort) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for _, p := range ports {
		if p.Port == nil || p.Port.Type == 0 {
			out = append(out, p)
		}
	}
	return out
}

func peerMatches(ns string, peer networkingv1.NetworkPolicyPeer, p Pod, namespaces map[string]map[string]string) bool {
	if peer.NamespaceSelector == nil {
		return p.Namespace == ns && selects(peer.PodSelector, p.Labels)
	}
	nsLabels, known := namespaces[p.Namespace]
	if !known {
		nsLabels = map[string]string{"kubernetes.io/metadata.name": p.Namespace}
	}
	if !selects(peer.NamespaceSelector, nsLabels) {
		return false
	}
	return peer.PodSelector == nil || selects(peer.PodSelector, p.Labels)
}

// portRanges resolves policy ports; ok is false when ports were given but none resolve
// (the rule then allows nothing).
func portRanges(ports []networkingv1.NetworkPolicyPort, named Pod) ([]PortRange, bool) {
	if len(ports) == 0 {
		return nil, true
	}
	var out []PortRange
	for _, p := range ports {
		proto := "TCP"
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		switch {
		case p.Port == nil:
			out = append(out, PortRange{Protocol: proto})
		case p.Port.Type == 1:
			for _, cp := range named.Ports {
				if cp.Name == p.Port.StrVal && strings.EqualFold(cp.Protocol, proto) {
					out = append(out, PortRange{Protocol: proto, From: cp.Port, To: cp.Port})
				}
			}
		default:
			r := PortRange{Protocol: proto, From: p.Port.IntVal, To: p.Port.IntVal}
			if p.EndPort != nil && *p.EndPort > r.From {
				r.To = *p.EndPort
			}
			out = append(out, r)
		}
	}
	return out, len(out) > 0
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return ipLess(out[i], out[j]) })
	return out
}

func ipLess(a, b string) bool {
	ia, ib := net.ParseIP(a).To4(), net.ParseIP(b).To4()
	if ia == nil || ib == nil {
		return a < b
	}
	return string(ia) < string(ib)
}
