package node

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEphemeralContainerKeepsItsSpec(t *testing.T) {
	ec := v1.EphemeralContainer{TargetContainerName: "main", EphemeralContainerCommon: v1.EphemeralContainerCommon{
		Name: "probe", Image: "busybox", Command: []string{"sleep", "60"},
		SecurityContext: &v1.SecurityContext{RunAsUser: &[]int64{1000}[0]},
	}}
	c := ephemeralContainer(ec)
	if c.Name != "probe" || c.Image != "busybox" || len(c.Command) != 2 || *c.SecurityContext.RunAsUser != 1000 {
		t.Fatalf("lost fields: %+v", c)
	}
}

// An ephemeral container that exited is Terminated, never CrashLoopBackOff (never restarted),
// and a running one is started but not ready.
func TestEphemeralStatuses(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}}
	exited := &container{spec: v1.Container{Name: "done"}, term: &v1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Now()}}
	running := &container{spec: v1.Container{Name: "probe"}, running: true, startedAt: time.Now(), id: "x"}
	waiting := &container{spec: v1.Container{Name: "bad"}, waiting: "CreateContainerConfigError", waitingMsg: "target container x not found"}
	w := &podWorker{ephs: []*container{exited, running, waiting}}
	got := w.ephemeralStatuses(pod)
	if len(got) != 3 {
		t.Fatalf("want 3 statuses, got %d", len(got))
	}
	if got[0].State.Terminated == nil || got[0].State.Terminated.ExitCode != 1 {
		t.Errorf("exited: %+v", got[0].State)
	}
	if got[1].State.Running == nil || got[1].Ready || got[1].Started == nil || !*got[1].Started {
		t.Errorf("running: %+v ready=%v", got[1].State, got[1].Ready)
	}
	if got[2].State.Waiting == nil || got[2].State.Waiting.Reason != "CreateContainerConfigError" {
		t.Errorf("waiting: %+v", got[2].State)
	}
}

func TestIgnoredNamespacePoliciesAreNotEnforced(t *testing.T) {
	nss := []*v1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "open", Annotations: map[string]string{ignoreNetworkPolicyAnnotation: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "closed", Annotations: map[string]string{ignoreNetworkPolicyAnnotation: "false"}}},
	}
	nps := []*networkingv1.NetworkPolicy{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "open", Name: "default-deny"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "closed", Name: "default-deny"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "default-deny"}},
	}
	got := enforcedPolicies(nss, nps)
	if len(got) != 2 || got[0].Namespace != "closed" || got[1].Namespace != "other" {
		t.Fatalf("enforced: %v", got)
	}
}
