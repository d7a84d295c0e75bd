// Package provisioner is the local cluster's dynamic volume provisioner: the default
// StorageClass gives each claim a hostPath PV in a directory of the node, deleted with the
// claim (reclaim Delete). The node runs it as the `provisioner` component (the kubelet mounts
// hostPath PVs like any other volume).
package provisioner

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const (
	storageClass = "rossoctl-local"
	provisioner  = "rossoctl.dev/local-node"
)

// Main runs the provisioner until SIGTERM: `localcluster provisioner --kubeconfig F --dir D`.
func Main(args []string) int {
	fs := flag.NewFlagSet("provisioner", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	dir := fs.String("dir", "", "directory that holds the volumes")
	if err := fs.Parse(args); err != nil || *kubeconfig == "" || *dir == "" {
		klog.Errorf("usage: provisioner --kubeconfig FILE --dir DIR")
		return 2
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Errorf("kubeconfig: %v", err)
		return 1
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		klog.Errorf("client: %v", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	Run(ctx, client, *dir)
	<-ctx.Done()
	return 0
}

// Run makes the default StorageClass and serves its claims until ctx ends.
func Run(ctx context.Context, admin kubernetes.Interface, dir string) {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: storageClass, Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       provisioner,
		ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if _, err := admin.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		klog.Warningf("storage class: %v", err)
	}
	f := informers.NewSharedInformerFactory(admin, 0)
	_, _ = f.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o interface{}) { provisionClaim(ctx, admin, dir, o.(*v1.PersistentVolumeClaim)) },
		UpdateFunc: func(_, o interface{}) { provisionClaim(ctx, admin, dir, o.(*v1.PersistentVolumeClaim)) },
	})
	_, _ = f.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o interface{}) { reclaim(ctx, admin, dir, o.(*v1.PersistentVolume)) },
		UpdateFunc: func(_, o interface{}) { reclaim(ctx, admin, dir, o.(*v1.PersistentVolume)) },
	})
	f.Start(ctx.Done())
}

func provisionClaim(ctx context.Context, c kubernetes.Interface, dir string, pvc *v1.PersistentVolumeClaim) {
	class := ptr.Deref(pvc.Spec.StorageClassName, "")
	if pvc.Spec.VolumeName != "" || pvc.Status.Phase != v1.ClaimPending || class != storageClass || pvc.DeletionTimestamp != nil {
		return
	}
	size := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	dirType := v1.HostPathDirectoryOrCreate
	path := filepath.Join(dir, string(pvc.UID))
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID),
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisioner}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			StorageClassName:              storageClass,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: &dirType}},
		},
	}
	if err := os.MkdirAll(path, 0o777); err != nil {
		klog.Warningf("provision %s/%s: %v", pvc.Namespace, pvc.Name, err)
		return
	}
	_ = os.Chmod(path, 0o777)
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		klog.Warningf("provision %s/%s: %v", pvc.Namespace, pvc.Name, err)
	}
}

// reclaim deletes a released PV of ours and its data: the claim, not the pod, owns it.
func reclaim(ctx context.Context, c kubernetes.Interface, dir string, pv *v1.PersistentVolume) {
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != provisioner || pv.Status.Phase != v1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.HostPath == nil {
		return
	}
	// Only a directory of ours: a PV object names its path, and it is not trusted to stay inside.
	if path := filepath.Clean(pv.Spec.HostPath.Path); strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
		_ = os.RemoveAll(path)
	}
	if err := c.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		klog.Warningf("reclaim %s: %v", pv.Name, err)
	}
}
