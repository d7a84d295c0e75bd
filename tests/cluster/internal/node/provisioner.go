package node

import (
	"context"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const (
	storageClass = "rossoctl-local"
	provisioner  = "rossoctl.dev/local-node"
)

// provision is a dynamic provisioner for the default StorageClass: each claim gets a
// hostPath PV at DIR/node/pvcs/<claim UID>, deleted with the claim (reclaim Delete).
func provision(ctx context.Context, admin kubernetes.Interface, p paths) {
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
		AddFunc:    func(o interface{}) { provisionClaim(ctx, admin, p, o.(*v1.PersistentVolumeClaim)) },
		UpdateFunc: func(_, o interface{}) { provisionClaim(ctx, admin, p, o.(*v1.PersistentVolumeClaim)) },
	})
	_, _ = f.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o interface{}) { reclaim(ctx, admin, o.(*v1.PersistentVolume)) },
		UpdateFunc: func(_, o interface{}) { reclaim(ctx, admin, o.(*v1.PersistentVolume)) },
	})
	f.Start(ctx.Done())
}

func provisionClaim(ctx context.Context, c kubernetes.Interface, p paths, pvc *v1.PersistentVolumeClaim) {
	class := ptr.Deref(pvc.Spec.StorageClassName, "")
	if pvc.Spec.VolumeName != "" || pvc.Status.Phase != v1.ClaimPending || class != storageClass || pvc.DeletionTimestamp != nil {
		return
	}
	size := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	dirType := v1.HostPathDirectoryOrCreate
	path := p.node("pvcs", string(pvc.UID))
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
func reclaim(ctx context.Context, c kubernetes.Interface, pv *v1.PersistentVolume) {
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != provisioner || pv.Status.Phase != v1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.HostPath == nil {
		return
	}
	if path := pv.Spec.HostPath.Path; strings.Contains(path, "/node/pvcs/") {
		_ = os.RemoveAll(path)
	}
	if err := c.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		klog.Warningf("reclaim %s: %v", pv.Name, err)
	}
}
