package sandboxcontroller

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestE2E runs against a live cluster with this controller running, e.g.
//
//	SANDBOX_E2E_KUBECONFIG=$PWD/.local-cluster/kubeconfig go test -run E2E ./internal/sandboxcontroller
//
// Pods may stay Pending when no node runs; the test only needs them to exist.
func TestE2E(t *testing.T) {
	path := os.Getenv("SANDBOX_E2E_KUBECONFIG")
	if path == "" {
		t.Skip("SANDBOX_E2E_KUBECONFIG not set")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	ns := "sbx-e2e-" + time.Now().Format("150405")
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) }()

	sandboxes := dyn.Resource(GVR("v1beta1")).Namespace(ns)
	sb := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": Group + "/v1beta1", "kind": Kind,
		"metadata": map[string]interface{}{"name": "e2e"},
		"spec": map[string]interface{}{"podTemplate": map[string]interface{}{
			"metadata": map[string]interface{}{"labels": map[string]interface{}{"app": "e2e"}},
			"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{
				"name": "main", "image": "busybox", "command": []interface{}{"sleep", "3600"},
				"env": []interface{}{map[string]interface{}{"name": "A", "value": "1"}}}}},
		}},
	}}
	created, err := sandboxes.Create(ctx, sb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := kube.CoreV1().Pods(ns)

	// waitPod polls until the sandbox's pod exists with a UID other than notUID.
	waitPod := func(notUID types.UID) *corev1.Pod {
		t.Helper()
		var pod *corev1.Pod
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := pods.Get(ctx, "e2e", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			pod = p
			return err == nil && p.UID != notUID && p.DeletionTimestamp == nil, err
		})
		if err != nil {
			t.Fatalf("no pod (other than %s): %v", notUID, err)
		}
		return pod
	}
	start := time.Now()
	pod := waitPod("")
	t.Logf("pod %s after %v", pod.UID, time.Since(start))
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.UID != created.GetUID() || pod.Labels[LabelNameHash] != NameHash("e2e") || pod.Labels["app"] != "e2e" {
		t.Fatalf("pod metadata %+v %v", ref, pod.Labels)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		u, err := sandboxes.Get(ctx, "e2e", metav1.GetOptions{})
		sel, _, _ := unstructured.NestedString(u.Object, "status", "selector")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return err == nil && sel == Selector(&Sandbox{ObjectMeta: metav1.ObjectMeta{Name: "e2e"}}) && len(conds) == 3, err
	})
	if err != nil {
		t.Fatalf("status not written: %v", err)
	}

	// A template change reaches labels, never the spec of the running pod.
	patch := `{"spec":{"podTemplate":{"metadata":{"labels":{"app":"e2e","tier":"gold"}},` +
		`"spec":{"containers":[{"name":"main","image":"busybox","command":["sleep","3600"],"env":[{"name":"A","value":"2"}]}]}}}}`
	if _, err := sandboxes.Patch(ctx, "e2e", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "e2e", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return p.Labels["tier"] == "gold", nil
	})
	if err != nil {
		t.Fatalf("label not copied: %v", err)
	}
	if v := pod.Spec.Containers[0].Env[0].Value; v != "1" {
		t.Fatalf("running pod got the new spec: A=%s", v)
	}

	// A deleted pod comes back from the current template.
	old := pod.UID
	start = time.Now()
	if err := pods.Delete(ctx, "e2e", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &old}}); err != nil {
		t.Fatal(err)
	}
	pod = waitPod(old)
	t.Logf("replacement %s after %v", pod.UID, time.Since(start))
	if v := pod.Spec.Containers[0].Env[0].Value; v != "2" {
		t.Fatalf("replacement has the old template: A=%s", v)
	}

	// Deleting the sandbox lets the garbage collector take the pod.
	fg := metav1.DeletePropagationBackground
	if err := sandboxes.Delete(ctx, "e2e", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		// Gone, or being deleted by its node: either way the collector has acted.
		p, err := pods.Get(ctx, "e2e", metav1.GetOptions{})
		return apierrors.IsNotFound(err) || err == nil && p.DeletionTimestamp != nil, nil
	})
	if err != nil {
		t.Fatal("pod outlived its sandbox")
	}
}
