package sandboxcontroller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Controller turns each Sandbox into one Pod (plus its claims and service) and reports status.
type Controller struct {
	kube      kubernetes.Interface
	sandboxes dynamic.NamespaceableResourceInterface
	gvr       schema.GroupVersionResource
	sbLister  cache.GenericLister
	pods      corelisters.PodLister
	services  corelisters.ServiceLister
	claims    corelisters.PersistentVolumeClaimLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	now       func() time.Time
	start     func(stop <-chan struct{})
	onSynced  func() // optional: told once the caches are filled
}

// New wires informers for sandboxes at gvr and for the pods, services and claims it labels.
func New(kube kubernetes.Interface, dyn dynamic.Interface, gvr schema.GroupVersionResource, resync time.Duration) *Controller {
	c := &Controller{
		kube: kube, sandboxes: dyn.Resource(gvr), gvr: gvr, now: time.Now,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "sandboxes"}),
	}
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, resync)
	sbInf := dynFactory.ForResource(gvr)
	c.sbLister = sbInf.Lister()
	_, _ = sbInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueSandbox,
		UpdateFunc: func(_, obj interface{}) { c.enqueueSandbox(obj) },
		DeleteFunc: c.enqueueSandbox,
	})

	// Only objects carrying the name-hash label are ours, so cache just those.
	factory := informers.NewSharedInformerFactoryWithOptions(kube, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelNameHash }))
	owned := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, obj interface{}) { c.enqueueOwner(obj) },
		DeleteFunc: c.enqueueOwner,
	}
	podInf := factory.Core().V1().Pods()
	svcInf := factory.Core().V1().Services()
	pvcInf := factory.Core().V1().PersistentVolumeClaims()
	_, _ = podInf.Informer().AddEventHandler(owned)
	_, _ = svcInf.Informer().AddEventHandler(owned)
	c.pods, c.services, c.claims = podInf.Lister(), svcInf.Lister(), pvcInf.Lister()
	c.synced = []cache.InformerSynced{sbInf.Informer().HasSynced, podInf.Informer().HasSynced,
		svcInf.Informer().HasSynced, pvcInf.Informer().HasSynced}
	c.start = func(stop <-chan struct{}) { dynFactory.Start(stop); factory.Start(stop) }
	return c
}

// Run starts the informers and workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.queue.ShutDown()
	c.start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("caches did not sync")
	}
	klog.Infof("sandbox-controller: watching %s", c.gvr)
	if c.onSynced != nil {
		c.onSynced()
	}
	for i := 0; i < workers; i++ {
		go func() {
			for c.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.reconcile(ctx, key); err != nil {
		// A conflict only means our cache trailed our own last write: retry quietly.
		if apierrors.IsConflict(err) {
			klog.V(4).Infof("sandbox %s: %v (retrying)", key, err)
		} else {
			klog.Warningf("sandbox %s: %v (retrying)", key, err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

func (c *Controller) enqueueSandbox(obj interface{}) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// enqueueOwner maps a pod, service or claim event to the sandbox that controls it.
func (c *Controller) enqueueOwner(obj interface{}) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(o)
	if ref == nil || ref.Kind != Kind {
		return
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != Group {
		return
	}
	c.queue.Add(o.GetNamespace() + "/" + ref.Name)
}

func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, err := c.sbLister.ByNamespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // the garbage collector removes what it owned
	} else if err != nil {
		return err
	}
	u := obj.(*unstructured.Unstructured)
	sb, err := FromUnstructured(u)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if sb.DeletionTimestamp != nil {
		return nil
	}
	now := c.now().Truncate(time.Second)
	obs := Observed{Now: now, Expired: Expired(sb, now)}
	obs.Pod, err = c.pods.Pods(ns).Get(PodName(sb))
	if apierrors.IsNotFound(err) {
		obs.Pod = nil
	} else if err != nil {
		return err
	}
	obs.NotOwned = obs.Pod != nil && !OwnedBy(obs.Pod, sb)

	switch {
	case obs.Expired && sb.Spec.ShutdownPolicy == ShutdownPolicyDelete:
		klog.Infof("sandbox %s: shutdownTime passed, deleting it", key)
		bg := metav1.DeletePropagationBackground
		err := c.sandboxes.Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{
			PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &sb.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	case obs.Expired || sb.Suspended():
		if err := c.deletePod(ctx, obs); err != nil {
			return err
		}
	default:
		if err := c.ensureRunning(ctx, sb, &obs); err != nil {
			return err
		}
		if sb.Spec.ShutdownTime != nil {
			c.queue.AddAfter(key, sb.Spec.ShutdownTime.Sub(now)+time.Second)
		}
	}
	if sb.Spec.Service {
		if _, err := c.services.Services(ns).Get(sb.Name); err == nil {
			obs.Service = sb.Name
		}
	}
	return c.writeStatus(ctx, u, sb, obs)
}

// deletePod removes the sandbox's own pod, by UID so a replacement is never hit.
func (c *Controller) deletePod(ctx context.Context, obs Observed) error {
	p := obs.Pod
	if p == nil || obs.NotOwned || p.DeletionTimestamp != nil {
		return nil
	}
	err := c.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// ensureRunning creates what is missing; a pod that exists keeps its spec (upstream
// behaviour: template changes wait for the next pod) and only gets labels and annotations.
func (c *Controller) ensureRunning(ctx context.Context, sb *Sandbox, obs *Observed) error {
	for _, pvc := range BuildPVCs(sb) {
		if _, err := c.claims.PersistentVolumeClaims(sb.Namespace).Get(pvc.Name); err == nil {
			continue
		}
		_, err := c.kube.CoreV1().PersistentVolumeClaims(sb.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create claim %s: %w", pvc.Name, err)
		}
	}
	if sb.Spec.Service {
		if _, err := c.services.Services(sb.Namespace).Get(sb.Name); apierrors.IsNotFound(err) {
			_, err := c.kube.CoreV1().Services(sb.Namespace).Create(ctx, BuildService(sb), metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create service: %w", err)
			}
		}
	}
	pods := c.kube.CoreV1().Pods(sb.Namespace)
	switch {
	case obs.Pod == nil:
		created, err := pods.Create(ctx, BuildPod(sb), metav1.CreateOptions{})
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil // the sandbox goes with its namespace; retrying only adds noise
		}
		if apierrors.IsAlreadyExists(err) {
			// The cache lags behind our own earlier create; read the real one.
			created, err = pods.Get(ctx, PodName(sb), metav1.GetOptions{})
			if err == nil {
				obs.NotOwned = !OwnedBy(created, sb)
			}
		}
		if err != nil {
			return fmt.Errorf("create pod: %w", err)
		}
		klog.V(2).Infof("sandbox %s/%s: pod %s (uid %s)", sb.Namespace, sb.Name, created.Name, created.UID)
		obs.Pod = created
	case !obs.NotOwned && obs.Pod.DeletionTimestamp == nil:
		patch := MetadataPatch(sb, obs.Pod)
		if patch == nil {
			return nil
		}
		body, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		updated, err := pods.Patch(ctx, obs.Pod.Name, types.MergePatchType, body, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch pod metadata: %w", err)
		}
		obs.Pod = updated
	}
	return nil
}

func (c *Controller) writeStatus(ctx context.Context, u *unstructured.Unstructured, sb *Sandbox, obs Observed) error {
	st := ComputeStatus(sb, obs)
	if equality.Semantic.DeepEqual(st, sb.Status) {
		return nil
	}
	m, err := StatusToUnstructured(&st)
	if err != nil {
		return err
	}
	out := u.DeepCopy()
	out.Object["status"] = m
	_, err = c.sandboxes.Namespace(sb.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
