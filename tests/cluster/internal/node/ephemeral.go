package node

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// Ephemeral containers (added through pods/ephemeralcontainers) join the running pod: its
// network namespace, volumes and /etc files, like any of its containers. As in the kubelet
// they start once the init containers are done, are never restarted, have no probes and
// do not count toward the pod's phase or readiness.

// ephemeralContainer is the Container an EphemeralContainer describes (the same fields).
func ephemeralContainer(ec v1.EphemeralContainer) v1.Container {
	return v1.Container(ec.EphemeralContainerCommon)
}

// startEphemerals starts each ephemeral container the spec gained since the last sync.
func (w *podWorker) startEphemerals(ctx context.Context, pod *v1.Pod) {
	for _, ec := range pod.Spec.EphemeralContainers {
		if w.ephemeral(ec.Name) != nil {
			continue
		}
		c := &container{spec: ephemeralContainer(ec), waiting: "ContainerCreating"}
		w.mu.Lock()
		w.ephs = append(w.ephs, c)
		w.mu.Unlock()
		if ec.TargetContainerName != "" && w.named(ec.TargetContainerName) == nil {
			w.ephemeralFailed(c, &configError{errors.New("target container " + ec.TargetContainerName + " not found")})
			continue
		}
		if err := w.start(ctx, pod, c); err != nil {
			klog.Warningf("pod %s/%s: ephemeral container %s: %v", pod.Namespace, pod.Name, ec.Name, err)
			w.ephemeralFailed(c, err)
		}
	}
}

// ephemeralFailed records a start that failed; ephemeral containers are not retried.
func (w *podWorker) ephemeralFailed(c *container, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.waiting, c.waitingMsg = "CreateContainerError", err.Error()
	var ce *configError
	if errors.As(err, &ce) {
		c.waiting = "CreateContainerConfigError"
	}
}

func (w *podWorker) ephemeral(name string) *container {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.ephs {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

// named is the regular or init container called name.
func (w *podWorker) named(name string) *container {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range append(append([]*container{}, w.ctrs...), w.inits...) {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

// ephemeralStatuses renders ephemeralContainerStatuses; the caller holds w.mu. An
// ephemeral container is never restarted, never ready: reported as in a terminal pod.
func (w *podWorker) ephemeralStatuses(pod *v1.Pod) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for _, c := range w.ephs {
		s := w.containerStatus(pod, c, true)
		if c.running {
			s.Started = &[]bool{true}[0]
		}
		out = append(out, s)
	}
	return out
}
