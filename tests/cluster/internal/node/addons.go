package node

import (
	"context"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// ensureAddons creates the cluster DNS (Service kube-dns at 10.96.0.10 and a Deployment
// whose pod runs this binary from the host) with admin credentials, as kubeadm would.
func ensureAddons(ctx context.Context, admin kubernetes.Interface, p paths, self string) {
	for ctx.Err() == nil {
		err := ensureDNS(ctx, admin, p, self)
		if err == nil {
			return
		}
		klog.Warningf("dns addon: %v", err)
		time.Sleep(2 * time.Second)
	}
}

func ensureDNS(ctx context.Context, c kubernetes.Interface, p paths, self string) error {
	labels := map[string]string{"k8s-app": "kube-dns"}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: labels},
		Spec: v1.ServiceSpec{ClusterIP: dnsIP, Selector: labels, Ports: []v1.ServicePort{
			{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
			{Name: "dns-tcp", Port: 53, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
		}},
	}
	// Get first: with the ClusterIP taken, Create fails as Invalid before AlreadyExists.
	if _, err := c.CoreV1().Services("kube-system").Get(ctx, svc.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if _, err := c.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	} else if err != nil {
		return err
	}
	bin := filepath.Dir(self)
	hostDir := v1.HostPathDirectoryOrCreate
	spec := v1.PodSpec{
		Containers: []v1.Container{{
			Name: "dns", Image: "rossoctl.dev/local-node-dns:host",
			Command: []string{self, "node", "dns", "--records", "/rossoctl/dns/records"},
			Ports: []v1.ContainerPort{{Name: "dns", ContainerPort: 53, Protocol: v1.ProtocolUDP},
				{Name: "dns-tcp", ContainerPort: 53, Protocol: v1.ProtocolTCP}},
			VolumeMounts: []v1.VolumeMount{{Name: "bin", MountPath: bin, ReadOnly: true},
				{Name: "records", MountPath: "/rossoctl/dns", ReadOnly: true}},
		}},
		Volumes: []v1.Volume{
			{Name: "bin", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: bin}}},
			{Name: "records", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: p.node("dns"), Type: &hostDir}}},
		},
		Tolerations:                  []v1.Toleration{{Operator: v1.TolerationOpExists}},
		PriorityClassName:            "system-cluster-critical",
		DNSPolicy:                    v1.DNSDefault,
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	deps := c.AppsV1().Deployments("kube-system")
	cur, err := deps.Get(ctx, "kube-dns", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = deps.Create(ctx, dep, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if cs := cur.Spec.Template.Spec.Containers; len(cs) == 1 && len(cs[0].Command) > 0 && cs[0].Command[0] == self {
		return nil
	}
	cur.Spec = dep.Spec
	_, err = deps.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
