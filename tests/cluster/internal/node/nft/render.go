package nft

import (
	"fmt"
	"net"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Service is a ClusterIP service; its endpoints are the ready pods its selector matches.
type Service struct {
	Namespace, Name, ClusterIP string
	Selector                   map[string]string
	Ports                      []corev1.ServicePort
}

// Config is everything the ruleset is derived from.
type Config struct {
	Table      string   // nft table name (family inet)
	Bridge     string   // pod bridge interface
	HostIP     string   // the bridge address: the node itself, always allowed in (probes)
	PodCIDR    string   // pods' addresses
	Reachable  []string // CIDRs pods may reach by forwarding: pods and the outside world
	OutsideNet string   // the outside world's network; it may only talk to pods
	ServiceNet string   // ClusterIPs; anything not DNATed there is rejected
	Pods       []Pod
	Namespaces map[string]map[string]string
	Policies   []*networkingv1.NetworkPolicy
	Services   []Service
}

// Render returns an nft script that atomically replaces the node's table.
func Render(c Config) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	// Creating then deleting makes the delete safe when the table does not exist yet;
	// the whole script is one transaction, so there is never a moment without rules.
	w("table inet %s", c.Table)
	w("delete table inet %s", c.Table)
	w("table inet %s {", c.Table)
	svcChains := renderServices(&b, c)
	w("  chain prerouting {\n    type nat hook prerouting priority dstnat; policy accept;\n    jump services\n  }")
	w("  chain output_nat {\n    type nat hook output priority -100; policy accept;\n    jump services\n  }")
	w("  chain services {")
	for _, line := range svcChains {
		w("    %s", line)
	}
	w("  }")
	ingress, egress := Compute(c.Pods, c.Namespaces, c.Policies)
	w("  chain forward {\n    type filter hook forward priority filter; policy accept;")
	// Safety first: pods reach only pods, services and the outside world; never beyond.
	w("    ip saddr %s ip daddr %s reject", c.PodCIDR, c.ServiceNet)
	w("    ip saddr %s ip daddr != { %s } counter drop", c.PodCIDR, strings.Join(c.Reachable, ", "))
	w("    ip saddr %s ip daddr != %s counter drop", c.OutsideNet, c.PodCIDR)
	w("    meta nfproto ipv6 iifname %q drop", c.Bridge)
	w("    ct state established,related accept")
	w("    ct state invalid drop")
	for _, iso := range egress {
		w("    ip saddr %s jump %s", iso.Pod.IP, chainName("eg", iso.Pod.IP))
	}
	for _, iso := range ingress {
		w("    ip daddr %s jump %s", iso.Pod.IP, chainName("in", iso.Pod.IP))
	}
	w("  }")
	w("  chain input {\n    type filter hook input priority filter; policy accept;")
	w("    ip saddr %s ct state established,related accept", c.PodCIDR)
	for _, iso := range egress {
		w("    ip saddr %s jump %s", iso.Pod.IP, chainName("eg", iso.Pod.IP))
	}
	w("  }")
	for _, iso := range egress {
		renderChain(&b, chainName("eg", iso.Pod.IP), "daddr", iso.Rules, "")
	}
	for _, iso := range ingress {
		renderChain(&b, chainName("in", iso.Pod.IP), "saddr", iso.Rules, c.HostIP)
	}
	w("}")
	return b.String()
}

func chainName(prefix, ip string) string {
	return prefix + "-" + strings.ReplaceAll(ip, ".", "-")
}

// renderChain writes an isolated pod's chain: each allow rule returns (the other
// direction's check still follows), everything else is dropped.
func renderChain(b *strings.Builder, name, dir string, rules []Rule, alwaysFrom string) {
	fmt.Fprintf(b, "  chain %s {\n", name)
	if alwaysFrom != "" {
		fmt.Fprintf(b, "    ip saddr %s return\n", alwaysFrom)
	}
	for _, r := range rules {
		var matches []string
		switch {
		case r.Any:
			matches = []string{""}
		default:
			if len(r.Peers) > 0 {
				matches = append(matches, fmt.Sprintf("ip %s { %s } ", dir, strings.Join(r.Peers, ", ")))
			}
			for _, bl := range r.Blocks {
				m := fmt.Sprintf("ip %s %s ", dir, bl.CIDR)
				if len(bl.Except) > 0 {
					m += fmt.Sprintf("ip %s != { %s } ", dir, strings.Join(bl.Except, ", "))
				}
				matches = append(matches, m)
			}
		}
		for _, m := range matches {
			if len(r.Ports) == 0 {
				fmt.Fprintf(b, "    %sreturn\n", m)
				continue
			}
			for _, p := range r.Ports {
				fmt.Fprintf(b, "    %s%sreturn\n", m, portMatch(p))
			}
		}
	}
	fmt.Fprintf(b, "    drop\n  }\n")
}

func portMatch(p PortRange) string {
	proto := strings.ToLower(p.Protocol)
	switch {
	case p.From == 0:
		return fmt.Sprintf("meta l4proto %s ", proto)
	case p.To > p.From:
		return fmt.Sprintf("meta l4proto %s th dport %d-%d ", proto, p.From, p.To)
	}
	return fmt.Sprintf("meta l4proto %s th dport %d ", proto, p.From)
}

// renderServices writes per-endpoint DNAT chains and returns the dispatch rules.
func renderServices(b *strings.Builder, c Config) []string {
	svcs := append([]Service(nil), c.Services...)
	sort.Slice(svcs, func(i, j int) bool { return svcs[i].ClusterIP < svcs[j].ClusterIP })
	var dispatch []string
	for _, s := range svcs {
		if ip := net.ParseIP(s.ClusterIP); ip == nil || ip.To4() == nil || len(s.Selector) == 0 {
			continue
		}
		var eps []Pod
		for _, p := range c.Pods {
			if p.Namespace == s.Namespace && p.Ready && labels.SelectorFromSet(s.Selector).Matches(labels.Set(p.Labels)) {
				eps = append(eps, p)
			}
		}
		sort.Slice(eps, func(i, j int) bool { return ipLess(eps[i].IP, eps[j].IP) })
		for _, sp := range s.Ports {
			proto := strings.ToLower(string(sp.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			var targets []string
			for _, ep := range eps {
				if port := targetPort(sp, ep); port > 0 {
					targets = append(targets, fmt.Sprintf("%s:%d", ep.IP, port))
				}
			}
			if len(targets) == 0 {
				continue
			}
			match := fmt.Sprintf("ip daddr %s meta l4proto %s th dport %d", s.ClusterIP, proto, sp.Port)
			if len(targets) == 1 {
				dispatch = append(dispatch, fmt.Sprintf("%s dnat ip to %s", match, targets[0]))
				continue
			}
			var vm []string
			for i, t := range targets {
				name := fmt.Sprintf("svc-%s-%s-%d-%d", strings.ReplaceAll(s.ClusterIP, ".", "-"), proto, sp.Port, i)
				fmt.Fprintf(b, "  chain %s {\n    meta l4proto %s dnat ip to %s\n  }\n", name, proto, t)
				vm = append(vm, fmt.Sprintf("%d : jump %s", i, name))
			}
			dispatch = append(dispatch, fmt.Sprintf("%s numgen random mod %d vmap { %s }", match, len(targets), strings.Join(vm, ", ")))
		}
	}
	return dispatch
}

func targetPort(sp corev1.ServicePort, p Pod) int32 {
	switch {
	case sp.TargetPort.Type == 1:
		for _, cp := range p.Ports {
			if cp.Name == sp.TargetPort.StrVal {
				return cp.Port
			}
		}
		return 0
	case sp.TargetPort.IntVal != 0:
		return sp.TargetPort.IntVal
	}
	return sp.Port
}
