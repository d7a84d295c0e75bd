package sandboxcontroller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Names of the upstream API this controller stands in for.
const (
	Group            = "agents.x-k8s.io"
	Kind             = "Sandbox"
	Resource         = "sandboxes"
	LabelNameHash    = Group + "/sandbox-name-hash"
	AnnotationPodKey = Group + "/pod-name"

	OperatingModeRunning   = "Running"
	OperatingModeSuspended = "Suspended"
	ShutdownPolicyDelete   = "Delete"
	ShutdownPolicyRetain   = "Retain"

	ConditionReady     = "Ready"
	ConditionSuspended = "Suspended"
	ConditionFinished  = "Finished"
)

// Versions lists the served versions this controller can speak, preferred first.
var Versions = []string{"v1beta1", "v1alpha1"}

// GVR returns the Sandbox resource at one API version.
func GVR(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: version, Resource: Resource}
}

// Sandbox is the subset of the upstream type the controller reads and writes.
type Sandbox struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SandboxSpec   `json:"spec"`
	Status            SandboxStatus `json:"status,omitempty"`
}

// SandboxSpec carries both v1beta1 operatingMode and v1alpha1 replicas, as our CRD does.
type SandboxSpec struct {
	PodTemplate          PodTemplate                     `json:"podTemplate"`
	VolumeClaimTemplates []PersistentVolumeClaimTemplate `json:"volumeClaimTemplates,omitempty"`
	Service              bool                            `json:"service,omitempty"`
	ShutdownTime         *metav1.Time                    `json:"shutdownTime,omitempty"`
	ShutdownPolicy       string                          `json:"shutdownPolicy,omitempty"`
	OperatingMode        string                          `json:"operatingMode,omitempty"`
	Replicas             *int32                          `json:"replicas,omitempty"`
}

// PodTemplate is a pod template with only labels and annotations in its metadata.
type PodTemplate struct {
	Metadata EmbeddedMeta   `json:"metadata,omitempty"`
	Spec     corev1.PodSpec `json:"spec"`
}

// EmbeddedMeta is the metadata allowed on embedded templates.
type EmbeddedMeta struct {
	Name        string            `json:"name,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PersistentVolumeClaimTemplate becomes a PVC named <template>-<sandbox>.
type PersistentVolumeClaimTemplate struct {
	Metadata EmbeddedMeta                     `json:"metadata,omitempty"`
	Spec     corev1.PersistentVolumeClaimSpec `json:"spec"`
}

// SandboxStatus is what the controller reports; unknown fields are left to other writers.
type SandboxStatus struct {
	Conditions  []metav1.Condition `json:"conditions,omitempty"`
	Selector    string             `json:"selector,omitempty"`
	Replicas    int32              `json:"replicas"`
	PodIPs      []string           `json:"podIPs,omitempty"`
	NodeName    string             `json:"nodeName,omitempty"`
	Service     string             `json:"service,omitempty"`
	ServiceFQDN string             `json:"serviceFQDN,omitempty"`
}

// Suspended says whether the user asked for no pod, in either API version's words.
func (s *Sandbox) Suspended() bool {
	return s.Spec.OperatingMode == OperatingModeSuspended || (s.Spec.Replicas != nil && *s.Spec.Replicas == 0)
}

// FromUnstructured decodes a Sandbox read through the dynamic client.
func FromUnstructured(u *unstructured.Unstructured) (*Sandbox, error) {
	sb := &Sandbox{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, sb); err != nil {
		return nil, err
	}
	return sb, nil
}

// StatusToUnstructured renders a status for an UpdateStatus through the dynamic client.
func StatusToUnstructured(st *SandboxStatus) (map[string]interface{}, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(st)
}
