package node

import (
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// ignoreNetworkPolicyAnnotation on a Namespace ("true") makes this node enforce none of
// that namespace's NetworkPolicies: the objects stay, the pods are not isolated. It stands
// in for a network plugin that ignores NetworkPolicy, for tests of what notices that; no
// real cluster honours it.
const ignoreNetworkPolicyAnnotation = "localcluster.rossoctl.dev/ignore-networkpolicy"

// enforcedPolicies drops the policies of namespaces that ask to be ignored.
func enforcedPolicies(nss []*v1.Namespace, nps []*networkingv1.NetworkPolicy) []*networkingv1.NetworkPolicy {
	ignored := map[string]bool{}
	for _, ns := range nss {
		if ns.Annotations[ignoreNetworkPolicyAnnotation] == "true" {
			ignored[ns.Name] = true
		}
	}
	out := make([]*networkingv1.NetworkPolicy, 0, len(nps))
	for _, np := range nps {
		if !ignored[np.Namespace] {
			out = append(out, np)
		}
	}
	return out
}
