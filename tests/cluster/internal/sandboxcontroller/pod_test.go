package sandboxcontroller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func testSandbox() *Sandbox {
	sb := &Sandbox{}
	sb.Name, sb.Namespace, sb.UID = "orders", "team", "uid-1"
	sb.Spec.PodTemplate.Metadata.Labels = map[string]string{"app.kubernetes.io/name": "orders"}
	sb.Spec.PodTemplate.Metadata.Annotations = map[string]string{"note": "x"}
	sb.Spec.PodTemplate.Spec = corev1.PodSpec{
		Containers: []corev1.Container{{Name: "agent", Image: "busybox",
			VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/work"}}}},
		Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	return sb
}

func TestNameHash(t *testing.T) {
	a, b := NameHash("orders"), NameHash("orders")
	if a != b {
		t.Fatalf("not deterministic: %s %s", a, b)
	}
	if NameHash("orders2") == a {
		t.Fatalf("different names share hash %s", a)
	}
	if len(a) != 8 {
		t.Fatalf("want 8 hex digits, got %q", a)
	}
	if errs := validation.IsValidLabelValue(a); len(errs) > 0 {
		t.Fatalf("not a label value: %v", errs)
	}
	// FNV-1a 32 of the empty string is its offset basis.
	if got := NameHash(""); got != "811c9dc5" {
		t.Fatalf("NameHash(\"\") = %s", got)
	}
}

func TestBuildPod(t *testing.T) {
	sb := testSandbox()
	pod := BuildPod(sb)
	if pod.Name != "orders" || pod.Namespace != "team" {
		t.Fatalf("name %s/%s", pod.Namespace, pod.Name)
	}
	if pod.Labels[LabelNameHash] != NameHash("orders") || pod.Labels["app.kubernetes.io/name"] != "orders" {
		t.Fatalf("labels %v", pod.Labels)
	}
	if pod.Annotations["note"] != "x" {
		t.Fatalf("annotations %v", pod.Annotations)
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.UID != "uid-1" || ref.Kind != "Sandbox" || ref.APIVersion != "agents.x-k8s.io/v1beta1" ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Fatalf("owner %+v", ref)
	}
	// The pod owns a copy: changing it must not touch the template.
	pod.Spec.Containers[0].Image = "other"
	if sb.Spec.PodTemplate.Spec.Containers[0].Image != "busybox" {
		t.Fatal("pod spec aliases the template")
	}
	// The template's labels map must not gain the hash label either.
	if _, ok := sb.Spec.PodTemplate.Metadata.Labels[LabelNameHash]; ok {
		t.Fatal("template labels mutated")
	}
	if !OwnedBy(pod, sb) {
		t.Fatal("OwnedBy false for own pod")
	}
	other := testSandbox()
	other.UID = "uid-2"
	if OwnedBy(pod, other) {
		t.Fatal("OwnedBy true for another sandbox with the same name")
	}
}

func TestPodNameAnnotation(t *testing.T) {
	sb := testSandbox()
	sb.Annotations = map[string]string{AnnotationPodKey: "warm-pod-7"}
	if got := BuildPod(sb).Name; got != "warm-pod-7" {
		t.Fatalf("pod name %s", got)
	}
}

func TestVolumeClaimTemplates(t *testing.T) {
	sb := testSandbox()
	sb.Spec.VolumeClaimTemplates = []PersistentVolumeClaimTemplate{
		{Metadata: EmbeddedMeta{Name: "work"}}, {Metadata: EmbeddedMeta{Name: "cache"}},
	}
	pod := BuildPod(sb)
	if len(pod.Spec.Volumes) != 2 {
		t.Fatalf("volumes %+v", pod.Spec.Volumes)
	}
	work := pod.Spec.Volumes[0]
	if work.Name != "work" || work.EmptyDir != nil || work.PersistentVolumeClaim == nil ||
		work.PersistentVolumeClaim.ClaimName != "work-orders" {
		t.Fatalf("work volume not replaced: %+v", work)
	}
	if c := pod.Spec.Volumes[1]; c.Name != "cache" || c.PersistentVolumeClaim.ClaimName != "cache-orders" {
		t.Fatalf("cache volume not added: %+v", c)
	}
	if sb.Spec.PodTemplate.Spec.Volumes[0].EmptyDir == nil {
		t.Fatal("template volume mutated")
	}
	pvcs := BuildPVCs(sb)
	if len(pvcs) != 2 || pvcs[0].Name != "work-orders" || metav1.GetControllerOf(pvcs[0]).UID != "uid-1" ||
		pvcs[0].Labels[LabelNameHash] != NameHash("orders") {
		t.Fatalf("pvcs %+v", pvcs)
	}
}

func TestMetadataPatch(t *testing.T) {
	sb := testSandbox()
	pod := BuildPod(sb)
	if p := MetadataPatch(sb, pod); p != nil {
		t.Fatalf("fresh pod needs patch %v", p)
	}
	pod.Labels["added-by-someone"] = "keep"
	sb.Spec.PodTemplate.Metadata.Labels["tier"] = "gold"
	sb.Spec.PodTemplate.Metadata.Annotations["note"] = "y"
	sb.Spec.PodTemplate.Spec.Containers[0].Image = "new" // spec changes never patch
	p := MetadataPatch(sb, pod)
	meta := p["metadata"].(map[string]interface{})
	labels := meta["labels"].(map[string]string)
	if len(labels) != 1 || labels["tier"] != "gold" {
		t.Fatalf("labels patch %v", labels)
	}
	if ann := meta["annotations"].(map[string]string); len(ann) != 1 || ann["note"] != "y" {
		t.Fatalf("annotations patch %v", ann)
	}
	if _, ok := p["spec"]; ok {
		t.Fatal("patch touches spec")
	}
}

func TestSuspended(t *testing.T) {
	sb := testSandbox()
	zero, one := int32(0), int32(1)
	cases := []struct {
		mode string
		rep  *int32
		want bool
	}{{"", nil, false}, {"Running", nil, false}, {"Suspended", nil, true}, {"", &zero, true}, {"", &one, false}, {"Suspended", &one, true}}
	for _, c := range cases {
		sb.Spec.OperatingMode, sb.Spec.Replicas = c.mode, c.rep
		if got := sb.Suspended(); got != c.want {
			t.Errorf("mode %q replicas %v: got %v", c.mode, c.rep, got)
		}
	}
}
