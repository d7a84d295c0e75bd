package node

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// seccompRuntimeDefault is InitConfig.Seccomp when the node's default filter is installed.
const seccompRuntimeDefault = "RuntimeDefault"

// seccompProfile is the container's effective profile, as the kubelet and containerd settle
// it: the container's securityContext.seccompProfile over the pod's; nothing set means
// Unconfined (the kubelet's default while its seccompDefault setting is off, as here);
// privileged containers run unconfined (containerd sets no profile for them). Localhost
// profiles are refused: the node keeps no seccomp profile directory.
func seccompProfile(pod *v1.Pod, c *v1.Container) (string, error) {
	var p *v1.SeccompProfile
	if psc := pod.Spec.SecurityContext; psc != nil {
		p = psc.SeccompProfile
	}
	sc := c.SecurityContext
	if sc != nil && sc.SeccompProfile != nil {
		p = sc.SeccompProfile
	}
	if p == nil || (sc != nil && isTrue(sc.Privileged)) {
		return "", nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return seccompRuntimeDefault, nil
	case v1.SeccompProfileTypeUnconfined:
		return "", nil
	case v1.SeccompProfileTypeLocalhost:
		name := ""
		if p.LocalhostProfile != nil {
			name = *p.LocalhostProfile
		}
		return "", fmt.Errorf("seccomp profile Localhost %q: the local node loads no localhost profiles (only RuntimeDefault and Unconfined)", name)
	}
	return "", fmt.Errorf("seccomp profile type %q is not known", p.Type)
}

// capNumbers renders capability names as the numbers the filter is built from.
func capNumbers(names []string) []int {
	out := make([]int, 0, len(names))
	for _, name := range names {
		out = append(out, capNames[name])
	}
	return out
}
