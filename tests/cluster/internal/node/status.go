package node

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// containerStatus renders one container as the kubelet would report it.
func (w *podWorker) containerStatus(pod *v1.Pod, c *container, podTerminal bool) v1.ContainerStatus {
	s := v1.ContainerStatus{
		Name: c.spec.Name, Image: c.spec.Image, ImageID: c.spec.Image,
		RestartCount: c.restartCount, LastTerminationState: v1.ContainerState{Terminated: c.last},
	}
	f := false
	s.Started = &f
	switch {
	case c.running:
		s.ContainerID = "rossoctl://" + c.id
		s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(c.startedAt)}
		started := c.spec.StartupProbe == nil || c.probes.startup.ok
		ready := !podTerminal && started && (c.spec.ReadinessProbe == nil || c.probes.readiness.ok)
		s.Started, s.Ready = &started, ready
	case c.term != nil:
		s.ContainerID = c.term.ContainerID
		policy := pod.Spec.RestartPolicy
		restart := !podTerminal && !c.isInit && (policy == v1.RestartPolicyAlways || policy == "" ||
			(policy == v1.RestartPolicyOnFailure && c.term.ExitCode != 0))
		if c.isInit && c.term.ExitCode != 0 && policy != v1.RestartPolicyNever && !podTerminal {
			restart = true
		}
		if restart {
			s.LastTerminationState = v1.ContainerState{Terminated: c.term}
			msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", c.backoff, c.spec.Name, pod.Name)
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}
		} else {
			s.State.Terminated = c.term
		}
	default:
		s.State.Waiting = &v1.ContainerStateWaiting{Reason: c.waiting, Message: c.waitingMsg}
		if w.setupErr != "" {
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
	}
	return s
}

// buildStatus computes the pod status from the containers; the caller holds w.mu.
func (w *podWorker) buildStatus(pod *v1.Pod) v1.PodStatus {
	st := v1.PodStatus{Phase: v1.PodPending, HostIP: "127.0.0.1", HostIPs: []v1.HostIP{{IP: "127.0.0.1"}},
		QOSClass: pod.Status.QOSClass}
	if !w.started.IsZero() {
		t := metav1.NewTime(w.started)
		st.StartTime = &t
	}
	if w.ip != "" {
		st.PodIP, st.PodIPs = w.ip, []v1.PodIP{{IP: w.ip}}
	}
	terminal := w.phase != ""
	initsDone := true
	for _, c := range w.inits {
		cs := w.containerStatus(pod, c, terminal)
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
		if c.term == nil || c.term.ExitCode != 0 {
			initsDone = false
		}
	}
	allReady, anyRunning, anyStarted := true, false, false
	for _, c := range w.ctrs {
		cs := w.containerStatus(pod, c, terminal)
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
		allReady = allReady && cs.Ready
		anyRunning = anyRunning || c.running
		anyStarted = anyStarted || c.running || c.term != nil || c.last != nil
	}
	st.EphemeralContainerStatuses = w.ephemeralStatuses(pod)
	switch {
	case terminal:
		st.Phase, st.Reason, st.Message = w.phase, w.reason, w.message
	case initsDone && (anyRunning || anyStarted):
		st.Phase = v1.PodRunning
	}
	now := metav1.Now()
	cond := func(t v1.PodConditionType, ok bool, reason string) {
		s := v1.ConditionFalse
		if ok {
			s, reason = v1.ConditionTrue, ""
		}
		c := v1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: now}
		for _, old := range pod.Status.Conditions {
			if old.Type == t && old.Status == s {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		st.Conditions = append(st.Conditions, c)
	}
	notReady := "ContainersNotReady"
	if terminal {
		notReady = "PodCompleted"
	}
	cond(v1.PodReadyToStartContainers, w.ready && !terminal, "")
	cond(v1.PodInitialized, initsDone || terminal, "ContainersNotInitialized")
	cond(v1.ContainersReady, allReady && !terminal, notReady)
	cond(v1.PodReady, allReady && !terminal, notReady)
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled || c.Type == v1.DisruptionTarget {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// pushStatus writes the status when it changed, retrying on conflicts with a fresh pod.
func (w *podWorker) pushStatus(ctx context.Context, pod *v1.Pod) {
	w.mu.Lock()
	st := w.buildStatus(pod)
	unchanged := w.last != nil && equality.Semantic.DeepEqual(stripTimes(*w.last), stripTimes(st))
	w.mu.Unlock()
	if unchanged {
		return
	}
	pods := w.m.client.CoreV1().Pods(pod.Namespace)
	cur := pod.DeepCopy()
	for try := 0; try < 5; try++ {
		cur.Status = st
		_, err := pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			w.mu.Lock()
			flipped := isReady(w.last) != isReady(&st)
			w.last = &st
			w.mu.Unlock()
			if flipped {
				// Service endpoints and DNS follow readiness.
				go func() { _ = w.m.netChanged() }()
			}
			return
		}
		if !apierrors.IsConflict(err) {
			klog.Warningf("pod %s/%s: status: %v", pod.Namespace, pod.Name, err)
			return
		}
		fresh, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || fresh.UID != pod.UID {
			return
		}
		cur = fresh
		w.mu.Lock()
		st = w.buildStatus(fresh)
		w.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
}

// stripTimes drops condition transition times so only real changes cause a write.
func stripTimes(st v1.PodStatus) v1.PodStatus {
	st.Conditions = append([]v1.PodCondition(nil), st.Conditions...)
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return st
}
