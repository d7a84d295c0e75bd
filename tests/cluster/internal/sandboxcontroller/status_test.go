package sandboxcontroller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func runningPod(sb *Sandbox, ready bool, ip string) *corev1.Pod {
	pod := BuildPod(sb)
	pod.Spec.NodeName = "local-node"
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}
	if ip != "" {
		pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	}
	return pod
}

func ready(t *testing.T, st SandboxStatus) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(st.Conditions, ConditionReady)
	if c == nil {
		t.Fatal("no Ready condition")
	}
	return c
}

func TestReadyOnlyWhenRunningReadyWithIP(t *testing.T) {
	sb := testSandbox()
	cases := []struct {
		name   string
		pod    *corev1.Pod
		want   metav1.ConditionStatus
		reason string
	}{
		{"no pod", nil, metav1.ConditionFalse, "PodNotFound"},
		{"pending", BuildPod(sb), metav1.ConditionFalse, "PodNotReady"},
		{"not ready", runningPod(sb, false, "10.244.0.5"), metav1.ConditionFalse, "PodNotReady"},
		{"no ip", runningPod(sb, true, ""), metav1.ConditionFalse, "PodNotReady"},
		{"ready", runningPod(sb, true, "10.244.0.5"), metav1.ConditionTrue, "PodReady"},
	}
	for _, c := range cases {
		st := ComputeStatus(sb, Observed{Pod: c.pod, Now: t0})
		r := ready(t, st)
		if r.Status != c.want || r.Reason != c.reason {
			t.Errorf("%s: Ready=%s/%s, want %s/%s", c.name, r.Status, r.Reason, c.want, c.reason)
		}
	}
	st := ComputeStatus(sb, Observed{Pod: runningPod(sb, true, "10.244.0.5"), Now: t0})
	if st.Replicas != 1 || len(st.PodIPs) != 1 || st.PodIPs[0] != "10.244.0.5" || st.NodeName != "local-node" ||
		st.Selector != LabelNameHash+"="+NameHash("orders") {
		t.Fatalf("status %+v", st)
	}
}

func TestTerminatingAndFinished(t *testing.T) {
	sb := testSandbox()
	pod := runningPod(sb, true, "10.244.0.5")
	now := metav1.NewTime(t0)
	pod.DeletionTimestamp = &now
	st := ComputeStatus(sb, Observed{Pod: pod, Now: t0})
	if r := ready(t, st); r.Status != metav1.ConditionFalse || r.Reason != "PodTerminating" || st.Replicas != 0 {
		t.Fatalf("terminating: %+v replicas %d", r, st.Replicas)
	}
	pod = BuildPod(sb)
	pod.Status.Phase = corev1.PodFailed
	st = ComputeStatus(sb, Observed{Pod: pod, Now: t0})
	if !meta.IsStatusConditionTrue(st.Conditions, ConditionFinished) || ready(t, st).Reason != "PodFailed" {
		t.Fatalf("failed pod: %+v", st.Conditions)
	}
}

func TestSuspendedAndExpired(t *testing.T) {
	sb := testSandbox()
	sb.Spec.OperatingMode = OperatingModeSuspended
	st := ComputeStatus(sb, Observed{Now: t0})
	if !meta.IsStatusConditionTrue(st.Conditions, ConditionSuspended) || ready(t, st).Reason != "SandboxSuspended" {
		t.Fatalf("suspended: %+v", st.Conditions)
	}
	sb = testSandbox()
	past := metav1.NewTime(t0.Add(-time.Minute))
	sb.Spec.ShutdownTime = &past
	if !Expired(sb, t0) || Expired(sb, t0.Add(-time.Hour)) {
		t.Fatal("Expired wrong")
	}
	st = ComputeStatus(sb, Observed{Pod: runningPod(sb, true, "10.244.0.5"), Expired: true, Now: t0})
	if r := ready(t, st); r.Status != metav1.ConditionFalse || r.Reason != "SandboxExpired" {
		t.Fatalf("expired: %+v", r)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, ConditionFinished) {
		t.Fatal("expired sandbox not Finished")
	}
}

func TestNotOwnedPodIsNotReported(t *testing.T) {
	sb := testSandbox()
	pod := runningPod(sb, true, "10.244.0.9")
	st := ComputeStatus(sb, Observed{Pod: pod, NotOwned: true, Now: t0})
	if ready(t, st).Reason != "PodNotOwned" || len(st.PodIPs) != 0 {
		t.Fatalf("foreign pod leaked into status: %+v", st)
	}
}

func TestTransitionTimeKeptWhileStatusHolds(t *testing.T) {
	sb := testSandbox()
	sb.Status = ComputeStatus(sb, Observed{Pod: BuildPod(sb), Now: t0})
	later := t0.Add(time.Minute)
	st := ComputeStatus(sb, Observed{Now: later}) // still not ready, other reason
	if r := ready(t, st); !r.LastTransitionTime.Time.Equal(t0) || r.Reason != "PodNotFound" {
		t.Fatalf("not ready -> not ready moved the time: %+v", r)
	}
	st = ComputeStatus(sb, Observed{Pod: runningPod(sb, true, "10.244.0.5"), Now: later})
	if r := ready(t, st); !r.LastTransitionTime.Time.Equal(later) {
		t.Fatalf("became ready without a new transition time: %+v", r)
	}
	sb.Generation = 4
	if r := ready(t, ComputeStatus(sb, Observed{Now: later})); r.ObservedGeneration != 4 {
		t.Fatalf("observedGeneration %d", r.ObservedGeneration)
	}
}
