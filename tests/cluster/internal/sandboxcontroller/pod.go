package sandboxcontroller

import (
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NameHash is the value of the sandbox-name-hash label: FNV-1a 32 in hex, short and label-safe.
func NameHash(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}

// Selector is the label selector string that finds a sandbox's pod.
func Selector(sb *Sandbox) string {
	return LabelNameHash + "=" + NameHash(sb.Name)
}

// PodName is the sandbox's name unless the pod-name annotation points elsewhere
// (upstream uses that to adopt a pre-warmed pod).
func PodName(sb *Sandbox) string {
	if n := sb.Annotations[AnnotationPodKey]; n != "" {
		return n
	}
	return sb.Name
}

// ClaimName is the PVC a volume claim template turns into for this sandbox.
func ClaimName(tmpl, sandbox string) string { return tmpl + "-" + sandbox }

// OwnerRef makes the sandbox the controlling owner, so the garbage collector removes its objects.
func OwnerRef(sb *Sandbox) metav1.OwnerReference {
	yes := true
	apiVersion := sb.APIVersion
	if apiVersion == "" {
		apiVersion = Group + "/" + Versions[0]
	}
	return metav1.OwnerReference{
		APIVersion: apiVersion, Kind: Kind, Name: sb.Name, UID: sb.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// DesiredLabels are the template's labels plus the name hash the selector needs.
func DesiredLabels(sb *Sandbox) map[string]string {
	out := map[string]string{}
	for k, v := range sb.Spec.PodTemplate.Metadata.Labels {
		out[k] = v
	}
	out[LabelNameHash] = NameHash(sb.Name)
	return out
}

// DesiredAnnotations are the template's annotations.
func DesiredAnnotations(sb *Sandbox) map[string]string {
	out := map[string]string{}
	for k, v := range sb.Spec.PodTemplate.Metadata.Annotations {
		out[k] = v
	}
	return out
}

// BuildPod renders the pod for a sandbox from its current template.
func BuildPod(sb *Sandbox) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            PodName(sb),
			Namespace:       sb.Namespace,
			Labels:          DesiredLabels(sb),
			Annotations:     DesiredAnnotations(sb),
			OwnerReferences: []metav1.OwnerReference{OwnerRef(sb)},
		},
		Spec: *sb.Spec.PodTemplate.Spec.DeepCopy(),
	}
	for _, t := range sb.Spec.VolumeClaimTemplates {
		src := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: ClaimName(t.Metadata.Name, sb.Name),
		}}
		replaced := false
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == t.Metadata.Name {
				pod.Spec.Volumes[i].VolumeSource = src
				replaced = true
			}
		}
		if !replaced {
			pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: t.Metadata.Name, VolumeSource: src})
		}
	}
	return pod
}

// BuildPVCs renders one claim per volume claim template.
func BuildPVCs(sb *Sandbox) []*corev1.PersistentVolumeClaim {
	var out []*corev1.PersistentVolumeClaim
	for _, t := range sb.Spec.VolumeClaimTemplates {
		labels := map[string]string{LabelNameHash: NameHash(sb.Name)}
		for k, v := range t.Metadata.Labels {
			labels[k] = v
		}
		out = append(out, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:            ClaimName(t.Metadata.Name, sb.Name),
				Namespace:       sb.Namespace,
				Labels:          labels,
				Annotations:     t.Metadata.Annotations,
				OwnerReferences: []metav1.OwnerReference{OwnerRef(sb)},
			},
			Spec: *t.Spec.DeepCopy(),
		})
	}
	return out
}

// BuildService renders the headless service a sandbox asks for with spec.service.
func BuildService(sb *Sandbox) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            sb.Name,
			Namespace:       sb.Namespace,
			Labels:          map[string]string{LabelNameHash: NameHash(sb.Name)},
			OwnerReferences: []metav1.OwnerReference{OwnerRef(sb)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{LabelNameHash: NameHash(sb.Name)},
		},
	}
}

// MetadataPatch returns the labels and annotations the pod lacks or has with another value,
// or nil when it is up to date; keys added by others are left alone.
func MetadataPatch(sb *Sandbox, pod *corev1.Pod) map[string]interface{} {
	meta := map[string]interface{}{}
	if d := missing(DesiredLabels(sb), pod.Labels); len(d) > 0 {
		meta["labels"] = d
	}
	if d := missing(DesiredAnnotations(sb), pod.Annotations); len(d) > 0 {
		meta["annotations"] = d
	}
	if len(meta) == 0 {
		return nil
	}
	return map[string]interface{}{"metadata": meta}
}

func missing(want, have map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			out[k] = v
		}
	}
	return out
}

// OwnedBy says whether the sandbox (by UID) is the pod's controlling owner.
func OwnedBy(obj metav1.Object, sb *Sandbox) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == sb.UID
}
