package node

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// event records what the kubelet would about a container (image pulls), without holding up
// the pod worker: the API call runs on its own.
func (m *Manager) event(pod *v1.Pod, c *container, kind, reason, message string) {
	if m.client == nil {
		return
	}
	field := fmt.Sprintf("spec.containers{%s}", c.spec.Name)
	if c.isInit {
		field = fmt.Sprintf("spec.initContainers{%s}", c.spec.Name)
	}
	now := metav1.Now()
	ev := &v1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, time.Now().UnixNano()), Namespace: pod.Namespace},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			APIVersion: "v1", ResourceVersion: pod.ResourceVersion, FieldPath: field},
		Reason: reason, Message: message, Type: kind, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              v1.EventSource{Component: "kubelet", Host: nodeName},
		ReportingController: "kubelet", ReportingInstance: nodeName,
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := m.client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			klog.V(2).Infof("event %s for %s/%s: %v", reason, pod.Namespace, pod.Name, err)
		}
	}()
}
