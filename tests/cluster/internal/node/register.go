package node

import (
	"context"
	"runtime"
	"strconv"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"golang.org/x/sys/unix"
)

// capacity is what the node advertises; overcommitted on purpose so tests with many
// sandboxes (each asking for its own cpu request) still schedule on a 2-core machine.
type capacity struct{ cpu, memory, pods string }

func (n capacity) list() v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(n.cpu), v1.ResourceMemory: resource.MustParse(n.memory),
		v1.ResourcePods: resource.MustParse(n.pods), v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}

func nodeObject(capa capacity, port int) *v1.Node {
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
			"kubernetes.io/hostname": nodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": runtime.GOARCH,
		}},
		Spec: v1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		Status: v1.NodeStatus{
			Capacity: capa.list(), Allocatable: capa.list(),
			Addresses:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "127.0.0.1"}, {Type: v1.NodeHostName, Address: nodeName}},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: int32(port)}},
			NodeInfo: v1.NodeSystemInfo{
				KubeletVersion: "v1.36.3", OperatingSystem: "linux", Architecture: runtime.GOARCH,
				ContainerRuntimeVersion: "rossoctl-local://0.1", KernelVersion: unix.ByteSliceToString(uts.Release[:]),
				OSImage: "rossoctl local node", MachineID: "local-node", SystemUUID: "local-node", BootID: strconv.FormatInt(time.Now().Unix(), 10),
			},
		},
	}
}

func nodeConditions(old []v1.NodeCondition) []v1.NodeCondition {
	now := metav1.Now()
	mk := func(t v1.NodeConditionType, s v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		c := v1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, o := range old {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		return c
	}
	return []v1.NodeCondition{
		mk(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		mk(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		mk(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		mk(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "local node is posting ready status"),
	}
}

// register creates or refreshes the Node object with node credentials.
func register(ctx context.Context, c kubernetes.Interface, capa capacity, port int) error {
	want := nodeObject(capa, port)
	want.Status.Conditions = nodeConditions(nil)
	nodes := c.CoreV1().Nodes()
	cur, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, err = nodes.Get(ctx, nodeName, metav1.GetOptions{})
		if err == nil {
			cur.Labels = want.Labels
			cur, err = nodes.Update(ctx, cur, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return err
	}
	return updateNodeStatus(ctx, c, cur, want)
}

func updateNodeStatus(ctx context.Context, c kubernetes.Interface, cur, want *v1.Node) error {
	boot := cur.Status.NodeInfo.BootID
	cur.Status = want.Status
	if boot != "" {
		cur.Status.NodeInfo.BootID = boot
	}
	cur.Status.Conditions = nodeConditions(cur.Status.Conditions)
	_, err := c.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// heartbeat renews the node Lease every 10s and posts status every minute (or on failure).
func heartbeat(ctx context.Context, c kubernetes.Interface, capa capacity, port int) {
	leases := c.CoordinationV1().Leases("kube-node-lease")
	last := time.Time{}
	for {
		now := metav1.NewMicroTime(time.Now())
		l, err := leases.Get(ctx, nodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l = &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Namespace: "kube-node-lease"},
				Spec: coordv1.LeaseSpec{HolderIdentity: ptr.To(nodeName), LeaseDurationSeconds: ptr.To(int32(40)), RenewTime: &now}}
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		} else if err == nil {
			l.Spec.RenewTime, l.Spec.HolderIdentity = &now, ptr.To(nodeName)
			l.Spec.LeaseDurationSeconds = ptr.To(int32(40))
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
		if err != nil {
			klog.Warningf("lease: %v", err)
		}
		if time.Since(last) > time.Minute || err != nil {
			if cur, gerr := c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{}); gerr == nil {
				if uerr := updateNodeStatus(ctx, c, cur, nodeObject(capa, port)); uerr == nil {
					last = time.Now()
				}
			} else if apierrors.IsNotFound(gerr) {
				_ = register(ctx, c, capa, port)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
}
