package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/klog/v2"

	"rossoctl.dev/localcluster/internal/node/nft"
)

// netController keeps the nft table and the DNS records in line with NetworkPolicies,
// Namespaces, Services and the pods this node runs.
type netController struct {
	paths      paths
	m          *Manager
	policies   *fastWatch
	namespaces *fastWatch
	services   *fastWatch
	mu         sync.Mutex // one nft transaction at a time
	lastSet    string
}

func newNetController(p paths, admin kubernetes.Interface) *netController {
	n := &netController{paths: p}
	n.policies = newFastWatch(admin.NetworkingV1().RESTClient(), "networkpolicies",
		&networkingv1.NetworkPolicy{}, n.kick)
	n.namespaces = newFastWatch(admin.CoreV1().RESTClient(), "namespaces", &v1.Namespace{}, n.kick)
	n.services = newFastWatch(admin.CoreV1().RESTClient(), "services", &v1.Service{}, n.kick)
	return n
}

// start begins watching and returns once the caches are filled, so no pod ever starts
// before the policies that may isolate it are known.
func (n *netController) start(ctx context.Context) error {
	for _, w := range []*fastWatch{n.policies, n.namespaces, n.services} {
		go w.run(ctx)
	}
	if err := waitSynced(ctx, n.policies, n.namespaces, n.services); err != nil {
		return err
	}
	return n.apply()
}

func (n *netController) kick() {
	go func() {
		if err := n.apply(); err != nil {
			klog.Errorf("network rules: %v", err)
		}
	}()
}

// apply renders and loads the ruleset; called synchronously when a pod gets its address.
func (n *netController) apply() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	cfg := nft.Config{
		Table: nftTable, Bridge: bridgeName, HostIP: bridgeIP, PodCIDR: podCIDR,
		Reachable: []string{podCIDR, outsideNet}, OutsideNet: outsideNet, ServiceNet: serviceNet,
		Namespaces: map[string]map[string]string{},
	}
	if n.m != nil {
		cfg.Pods = n.m.policyPods()
	}
	nss, _ := corelisters.NewNamespaceLister(n.namespaces.indexer).List(labels.Everything())
	for _, ns := range nss {
		cfg.Namespaces[ns.Name] = ns.Labels
	}
	nps, _ := networkinglisters.NewNetworkPolicyLister(n.policies.indexer).List(labels.Everything())
	cfg.Policies = enforcedPolicies(nss, nps)
	svcs, _ := corelisters.NewServiceLister(n.services.indexer).List(labels.Everything())
	for _, s := range svcs {
		if s.Spec.Type == v1.ServiceTypeExternalName {
			continue
		}
		cfg.Services = append(cfg.Services, nft.Service{Namespace: s.Namespace, Name: s.Name,
			ClusterIP: s.Spec.ClusterIP, Selector: s.Spec.Selector, Ports: s.Spec.Ports})
	}
	script := nft.Render(cfg)
	if script != n.lastSet {
		if err := run(script, "nft", "-f", "-"); err != nil {
			return err
		}
		n.lastSet = script
	}
	return n.writeDNS(svcs, cfg.Pods)
}

// writeDNS publishes A records for the DNS pod (it reads the file; it has no API access).
func (n *netController) writeDNS(svcs []*v1.Service, pods []nft.Pod) error {
	lines := []string{outsideDNS + " " + outsideIP}
	for _, s := range svcs {
		name := fmt.Sprintf("%s.%s.svc.cluster.local", s.Name, s.Namespace)
		switch {
		case s.Spec.Type == v1.ServiceTypeExternalName:
			continue
		case s.Spec.ClusterIP != "" && s.Spec.ClusterIP != v1.ClusterIPNone:
			lines = append(lines, name+" "+s.Spec.ClusterIP)
		case len(s.Spec.Selector) > 0:
			sel := labels.SelectorFromSet(s.Spec.Selector)
			for _, p := range pods {
				if p.Namespace == s.Namespace && p.Ready && sel.Matches(labels.Set(p.Labels)) {
					lines = append(lines, name+" "+p.IP)
				}
			}
		}
	}
	sort.Strings(lines)
	path := n.paths.node("dns", "records")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// policyPods lists the pods with an address, as the rules see them.
func (m *Manager) policyPods() []nft.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []nft.Pod
	for _, w := range m.workers {
		w.mu.Lock()
		pod, ip, last := w.pod, w.ip, w.last
		w.mu.Unlock()
		if pod == nil || ip == "" || pod.Spec.HostNetwork {
			continue
		}
		p := nft.Pod{Namespace: pod.Namespace, Name: pod.Name, IP: ip, Labels: pod.Labels, Ready: isReady(last)}
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				proto := string(cp.Protocol)
				if proto == "" {
					proto = "TCP"
				}
				p.Ports = append(p.Ports, nft.Port{Name: cp.Name, Protocol: proto, Port: cp.ContainerPort})
			}
		}
		out = append(out, p)
	}
	return out
}

func isReady(st *v1.PodStatus) bool {
	if st == nil {
		return false
	}
	for _, c := range st.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
