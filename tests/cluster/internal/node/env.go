package node

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// podField resolves a downward-API fieldPath.
func podField(pod *v1.Pod, path, podIP string) (string, error) {
	if k, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(k, "']")], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return "127.0.0.1", nil
	}
	return "", fmt.Errorf("unsupported fieldPath %q", path)
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q\n", k, m[k])
	}
	return b.String()
}

func resourceField(pod *v1.Pod, ref *v1.ResourceFieldSelector) (string, error) {
	for _, c := range pod.Spec.Containers {
		if ref.ContainerName != "" && c.Name != ref.ContainerName {
			continue
		}
		kind, name, _ := strings.Cut(ref.Resource, ".")
		list := c.Resources.Limits
		if kind == "requests" {
			list = c.Resources.Requests
		}
		q, ok := list[v1.ResourceName(name)]
		if !ok {
			if kind == "limits" && name == "memory" {
				q = *resource.NewQuantity(int64(totalMemory()), resource.BinarySI)
			} else {
				q = resource.MustParse("0")
			}
		}
		div := resource.MustParse("1")
		if ref.Divisor.Sign() > 0 {
			div = ref.Divisor
		}
		if name == "cpu" {
			return strconv.FormatInt((q.MilliValue()+div.MilliValue()-1)/div.MilliValue(), 10), nil
		}
		return strconv.FormatInt((q.Value()+div.Value()-1)/div.Value(), 10), nil
	}
	return "", fmt.Errorf("resourceFieldRef: no container %q", ref.ContainerName)
}

func totalMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return si.Totalram * uint64(si.Unit)
}

// containerEnv builds the environment the kubelet would: defaults, envFrom, env.
func (w *podWorker) containerEnv(ctx context.Context, pod *v1.Pod, c *v1.Container) ([]string, error) {
	vars := map[string]string{"PATH": defaultPath, "HOSTNAME": podHostname(pod), "HOME": "/root"}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok || !contains(order, k) {
			order = append(order, k)
		}
		vars[k] = v
	}
	order = append(order, "PATH", "HOSTNAME", "HOME")
	for _, ef := range c.EnvFrom {
		var data map[string][]byte
		switch {
		case ef.ConfigMapRef != nil:
			data = w.configMapData(ctx, pod.Namespace, ef.ConfigMapRef.Name)
			if data == nil && !isTrue(ef.ConfigMapRef.Optional) {
				return nil, fmt.Errorf("configmap %q not found", ef.ConfigMapRef.Name)
			}
		case ef.SecretRef != nil:
			data = w.secretData(ctx, pod.Namespace, ef.SecretRef.Name)
			if data == nil && !isTrue(ef.SecretRef.Optional) {
				return nil, fmt.Errorf("secret %q not found", ef.SecretRef.Name)
			}
		}
		for k, v := range data {
			set(ef.Prefix+k, string(v))
		}
	}
	for _, e := range c.Env {
		val := expandVars(e.Value, vars)
		if vf := e.ValueFrom; vf != nil {
			var err error
			switch {
			case vf.FieldRef != nil:
				val, err = podField(pod, vf.FieldRef.FieldPath, w.ip)
			case vf.ResourceFieldRef != nil:
				ref := *vf.ResourceFieldRef
				if ref.ContainerName == "" {
					ref.ContainerName = c.Name
				}
				val, err = resourceField(pod, &ref)
			case vf.ConfigMapKeyRef != nil:
				val, err = keyRef(w.configMapData(ctx, pod.Namespace, vf.ConfigMapKeyRef.Name), vf.ConfigMapKeyRef.Key, vf.ConfigMapKeyRef.Optional, "configmap "+vf.ConfigMapKeyRef.Name)
			case vf.SecretKeyRef != nil:
				val, err = keyRef(w.secretData(ctx, pod.Namespace, vf.SecretKeyRef.Name), vf.SecretKeyRef.Key, vf.SecretKeyRef.Optional, "secret "+vf.SecretKeyRef.Name)
			}
			if err != nil {
				return nil, err
			}
		}
		set(e.Name, val)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vars[k])
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keyRef(data map[string][]byte, key string, optional *bool, what string) (string, error) {
	if v, ok := data[key]; ok {
		return string(v), nil
	}
	if isTrue(optional) {
		return "", nil
	}
	return "", fmt.Errorf("couldn't find key %s in %s", key, what)
}

// expandVars does the kubelet's $(VAR) expansion ($$ escapes).
func expandVars(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) {
			if s[i+1] == '$' {
				b.WriteByte('$')
				i++
				continue
			}
			if s[i+1] == '(' {
				if end := strings.IndexByte(s[i:], ')'); end > 0 {
					name := s[i+2 : i+end]
					if v, ok := vars[name]; ok {
						b.WriteString(v)
						i += end
						continue
					}
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func podHostname(pod *v1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	if len(pod.Name) > 63 {
		return pod.Name[:63]
	}
	return pod.Name
}

func isMountpoint(dir string) bool {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// mountsUnder lists host mountpoints at or below dir, deepest first.
func mountsUnder(dir string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append(out, f[4])
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func mountTmpfs(dir, opts string) error {
	return unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)
}
