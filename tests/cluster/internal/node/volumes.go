package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// volume is a materialised pod volume: a host path that containers bind.
type volume struct {
	path       string
	readOnly   bool      // content the node writes (configMap, secret, projected)
	refreshAt  time.Time // when a projected token must be renewed; zero if never
	memoryTmpf bool
}

// setupVolume makes one pod volume exist on the host; refreshing rewrites generated files.
func (w *podWorker) setupVolume(ctx context.Context, pod *v1.Pod, vol v1.Volume) (*volume, error) {
	m := w.m
	dir := m.paths.pod(string(pod.UID), "volumes", vol.Name)
	src := vol.VolumeSource
	switch {
	case src.EmptyDir != nil:
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		_ = os.Chmod(dir, 0o777) // emptyDir is world-writable so non-root containers can use it
		v := &volume{path: dir}
		if src.EmptyDir.Medium == v1.StorageMediumMemory && !isMountpoint(dir) {
			opts := "mode=1777"
			if src.EmptyDir.SizeLimit != nil {
				opts += fmt.Sprintf(",size=%d", src.EmptyDir.SizeLimit.Value())
			}
			if err := mountTmpfs(dir, opts); err != nil {
				return nil, err
			}
			v.memoryTmpf = true
		}
		return v, nil
	case src.HostPath != nil:
		return hostPathVolume(src.HostPath)
	case src.PersistentVolumeClaim != nil:
		return w.pvcVolume(ctx, pod, src.PersistentVolumeClaim)
	case src.ConfigMap != nil, src.Secret != nil, src.DownwardAPI != nil, src.Projected != nil:
		return w.generatedVolume(ctx, pod, vol, dir)
	case src.Ephemeral != nil:
		return nil, fmt.Errorf("volume %s: generic ephemeral volumes are not supported by the local node", vol.Name)
	}
	return nil, fmt.Errorf("volume %s: unsupported volume type", vol.Name)
}

func hostPathVolume(hp *v1.HostPathVolumeSource) (*volume, error) {
	t := v1.HostPathUnset
	if hp.Type != nil {
		t = *hp.Type
	}
	switch t {
	case v1.HostPathDirectoryOrCreate:
		if err := os.MkdirAll(hp.Path, 0o755); err != nil {
			return nil, err
		}
	case v1.HostPathFileOrCreate:
		f, err := os.OpenFile(hp.Path, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return nil, err
		}
		f.Close()
	case v1.HostPathUnset:
	default:
		if _, err := os.Stat(hp.Path); err != nil {
			return nil, fmt.Errorf("hostPath %s: %w", hp.Path, err)
		}
	}
	return &volume{path: hp.Path}, nil
}

// pvcVolume binds the claim's PV: its hostPath/local path, else a host dir keyed by the claim UID.
func (w *podWorker) pvcVolume(ctx context.Context, pod *v1.Pod, src *v1.PersistentVolumeClaimVolumeSource) (*volume, error) {
	c := w.m.client
	pvc, err := c.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, src.ClaimName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	path := w.m.paths.node("pvcs", string(pvc.UID))
	if pvc.Spec.VolumeName != "" {
		if pv, err := c.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{}); err == nil {
			switch {
			case pv.Spec.HostPath != nil:
				path = pv.Spec.HostPath.Path
			case pv.Spec.Local != nil:
				path = pv.Spec.Local.Path
			}
		}
	}
	if err := os.MkdirAll(path, 0o777); err != nil {
		return nil, err
	}
	_ = os.Chmod(path, 0o777)
	return &volume{path: path, readOnly: src.ReadOnly}, nil
}

// generatedVolume writes configMap/secret/downwardAPI/projected content into dir.
func (w *podWorker) generatedVolume(ctx context.Context, pod *v1.Pod, vol v1.Volume, dir string) (*volume, error) {
	files := map[string][]byte{}
	modes := map[string]int32{}
	mode := int32(0o644)
	v := &volume{path: dir, readOnly: true}
	add := func(items []v1.KeyToPath, data map[string][]byte, optional bool, what string, defMode int32) error {
		if data == nil && !optional {
			return fmt.Errorf("%s not found", what)
		}
		if len(items) == 0 {
			for k, val := range data {
				files[k], modes[k] = val, defMode
			}
			return nil
		}
		for _, it := range items {
			val, ok := data[it.Key]
			if !ok {
				if optional {
					continue
				}
				return fmt.Errorf("%s has no key %q", what, it.Key)
			}
			files[it.Path], modes[it.Path] = val, defMode
			if it.Mode != nil {
				modes[it.Path] = *it.Mode
			}
		}
		return nil
	}
	src := vol.VolumeSource
	var err error
	switch {
	case src.ConfigMap != nil:
		if src.ConfigMap.DefaultMode != nil {
			mode = *src.ConfigMap.DefaultMode
		}
		err = add(src.ConfigMap.Items, w.configMapData(ctx, pod.Namespace, src.ConfigMap.Name), isTrue(src.ConfigMap.Optional), "configmap "+src.ConfigMap.Name, mode)
	case src.Secret != nil:
		if src.Secret.DefaultMode != nil {
			mode = *src.Secret.DefaultMode
		}
		err = add(src.Secret.Items, w.secretData(ctx, pod.Namespace, src.Secret.SecretName), isTrue(src.Secret.Optional), "secret "+src.Secret.SecretName, mode)
	case src.DownwardAPI != nil:
		if src.DownwardAPI.DefaultMode != nil {
			mode = *src.DownwardAPI.DefaultMode
		}
		err = w.addDownward(pod, src.DownwardAPI.Items, files, modes, mode)
	case src.Projected != nil:
		if src.Projected.DefaultMode != nil {
			mode = *src.Projected.DefaultMode
		}
		for _, ps := range src.Projected.Sources {
			switch {
			case ps.ConfigMap != nil:
				data := w.configMapData(ctx, pod.Namespace, ps.ConfigMap.Name)
				err = add(ps.ConfigMap.Items, data, isTrue(ps.ConfigMap.Optional), "configmap "+ps.ConfigMap.Name, mode)
			case ps.Secret != nil:
				err = add(ps.Secret.Items, w.secretData(ctx, pod.Namespace, ps.Secret.Name), isTrue(ps.Secret.Optional), "secret "+ps.Secret.Name, mode)
			case ps.DownwardAPI != nil:
				err = w.addDownward(pod, ps.DownwardAPI.Items, files, modes, mode)
			case ps.ServiceAccountToken != nil:
				var tok string
				tok, v.refreshAt, err = w.requestToken(ctx, pod, ps.ServiceAccountToken)
				files[ps.ServiceAccountToken.Path], modes[ps.ServiceAccountToken.Path] = []byte(tok), mode
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("volume %s: %w", vol.Name, err)
	}
	return v, writeFiles(dir, files, modes, fsGroup(pod))
}

func isTrue(b *bool) bool { return b != nil && *b }

func fsGroup(pod *v1.Pod) *int64 {
	if pod.Spec.SecurityContext != nil {
		return pod.Spec.SecurityContext.FSGroup
	}
	return nil
}

func (w *podWorker) configMapData(ctx context.Context, ns, name string) map[string][]byte {
	cm, err := w.m.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && name == "kube-root-ca.crt" {
		// The root-CA publisher may not have run yet; the cluster CA is the same file.
		if ca, err := os.ReadFile(w.m.paths.pki("ca.crt")); err == nil {
			return map[string][]byte{"ca.crt": ca}
		}
	}
	if err != nil {
		return nil
	}
	out := map[string][]byte{}
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	return out
}

func (w *podWorker) secretData(ctx context.Context, ns, name string) map[string][]byte {
	s, err := w.m.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	if s.Data == nil {
		return map[string][]byte{}
	}
	return s.Data
}

func (w *podWorker) addDownward(pod *v1.Pod, items []v1.DownwardAPIVolumeFile, files map[string][]byte, modes map[string]int32, mode int32) error {
	for _, it := range items {
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = podField(pod, it.FieldRef.FieldPath, w.ip)
		case it.ResourceFieldRef != nil:
			val, err = resourceField(pod, it.ResourceFieldRef)
		}
		if err != nil {
			return err
		}
		files[it.Path], modes[it.Path] = []byte(val), mode
		if it.Mode != nil {
			modes[it.Path] = *it.Mode
		}
	}
	return nil
}

// requestToken asks the TokenRequest API for a token bound to this pod, as the kubelet does.
func (w *podWorker) requestToken(ctx context.Context, pod *v1.Pod, p *v1.ServiceAccountTokenProjection) (string, time.Time, error) {
	exp := int64(3600)
	if p.ExpirationSeconds != nil {
		exp = *p.ExpirationSeconds
	}
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := w.m.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("token for serviceaccount %s: %w", sa, err)
	}
	// Renew at 80% of the lifetime the apiserver actually granted, as the kubelet does.
	ttl := time.Until(tr.Status.ExpirationTimestamp.Time)
	return tr.Status.Token, time.Now().Add(ttl * 8 / 10), nil
}

// writeFiles replaces dir's content with files; each file is written then renamed in place.
func writeFiles(dir string, files map[string][]byte, modes map[string]int32, group *int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		clean := filepath.Clean("/" + name)[1:]
		if clean == "" || strings.HasPrefix(clean, "..") {
			return field.Invalid(field.NewPath("path"), name, "must be relative")
		}
		keep[strings.Split(clean, "/")[0]] = true
		target := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		tmp := target + ".tmp"
		mode := os.FileMode(modes[name] & 0o777)
		if err := os.WriteFile(tmp, files[name], mode); err != nil {
			return err
		}
		_ = os.Chmod(tmp, mode)
		if group != nil {
			_ = os.Chown(tmp, 0, int(*group))
		}
		if err := os.Rename(tmp, target); err != nil {
			return err
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !keep[e.Name()] {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}
