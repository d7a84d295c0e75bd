package sandboxcontroller

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Observed is what the reconciler saw of the sandbox's world, the input to ComputeStatus.
type Observed struct {
	Pod      *corev1.Pod // nil when there is no pod of that name
	NotOwned bool        // the pod of that name belongs to someone else
	Expired  bool        // shutdownTime has passed
	Service  string      // name of the headless service, when one exists
	Now      time.Time
}

// Expired says whether the sandbox's shutdownTime is at or before now.
func Expired(sb *Sandbox, now time.Time) bool {
	return sb.Spec.ShutdownTime != nil && !now.Before(sb.Spec.ShutdownTime.Time)
}

// ComputeStatus derives the whole status; conditions keep their transition time when
// their status does not change (meta.SetStatusCondition does that).
func ComputeStatus(sb *Sandbox, obs Observed) SandboxStatus {
	st := SandboxStatus{Selector: Selector(sb)}
	st.Conditions = append([]metav1.Condition(nil), sb.Status.Conditions...)
	set := func(typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: typ, Status: s, Reason: reason, Message: msg,
			ObservedGeneration: sb.Generation, LastTransitionTime: metav1.NewTime(obs.Now),
		})
	}

	pod := obs.Pod
	if obs.NotOwned {
		pod = nil
	}
	terminal := pod != nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
	if pod != nil && !terminal && pod.DeletionTimestamp == nil {
		st.Replicas = 1
	}
	if pod != nil {
		st.NodeName = pod.Spec.NodeName
		for _, ip := range pod.Status.PodIPs {
			st.PodIPs = append(st.PodIPs, ip.IP)
		}
		if len(st.PodIPs) == 0 && pod.Status.PodIP != "" {
			st.PodIPs = []string{pod.Status.PodIP}
		}
	}
	if obs.Service != "" {
		st.Service = obs.Service
		st.ServiceFQDN = fmt.Sprintf("%s.%s.svc.cluster.local", obs.Service, sb.Namespace)
	}

	if sb.Suspended() {
		set(ConditionSuspended, true, "SandboxSuspended", "the sandbox is suspended; its pod is deleted")
	} else {
		set(ConditionSuspended, false, "SandboxRunning", "the sandbox is not suspended")
	}

	switch {
	case obs.Expired:
		set(ConditionFinished, true, "SandboxExpired", "shutdownTime "+sb.Spec.ShutdownTime.UTC().Format(time.RFC3339)+" has passed")
	case terminal:
		set(ConditionFinished, true, "Pod"+string(pod.Status.Phase), fmt.Sprintf("pod %s ended in phase %s", pod.Name, pod.Status.Phase))
	default:
		set(ConditionFinished, false, "NotFinished", "the sandbox has not finished")
	}

	reason, msg := readiness(sb, obs, pod, terminal)
	set(ConditionReady, reason == "PodReady", reason, msg)
	return st
}

// readiness returns the Ready condition's reason ("PodReady" when true) and message.
func readiness(sb *Sandbox, obs Observed, pod *corev1.Pod, terminal bool) (string, string) {
	name := PodName(sb)
	switch {
	case obs.Expired:
		return "SandboxExpired", "shutdownTime " + sb.Spec.ShutdownTime.UTC().Format(time.RFC3339) + " has passed"
	case sb.Suspended():
		return "SandboxSuspended", "the sandbox is suspended"
	case obs.NotOwned:
		return "PodNotOwned", fmt.Sprintf("pod %s exists but is not controlled by this sandbox", name)
	case pod == nil:
		return "PodNotFound", fmt.Sprintf("pod %s does not exist yet", name)
	case pod.DeletionTimestamp != nil:
		return "PodTerminating", fmt.Sprintf("pod %s is being deleted", name)
	case terminal:
		return "Pod" + string(pod.Status.Phase), fmt.Sprintf("pod %s ended in phase %s and is not restarted", name, pod.Status.Phase)
	case pod.Status.Phase != corev1.PodRunning:
		return "PodNotReady", fmt.Sprintf("pod %s is %s", name, phaseOrPending(pod))
	case !podReady(pod):
		return "PodNotReady", fmt.Sprintf("pod %s is running but not ready", name)
	case pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0:
		return "PodNotReady", fmt.Sprintf("pod %s has no IP yet", name)
	}
	return "PodReady", fmt.Sprintf("pod %s is ready", name)
}

func phaseOrPending(pod *corev1.Pod) string {
	if pod.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(pod.Status.Phase)
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
