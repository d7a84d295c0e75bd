package node

import (
	"context"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Manager runs the pods bound to this node: one worker per pod UID.
type Manager struct {
	paths   paths
	self    string // this binary, re-executed for `node init` (its -supervise twin for exec)
	client  kubernetes.Interface
	ipam    *ipam
	onNet   func() error // NetworkPolicy/service rules depend on pod IPs
	mu      sync.Mutex
	workers map[types.UID]*podWorker
	images  imageStore
}

func newManager(p paths, client kubernetes.Interface, onNet func() error) (*Manager, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return &Manager{paths: p, self: self, client: client, ipam: newIPAM(), onNet: onNet, workers: map[types.UID]*podWorker{},
		images: newImageStore(p, self)}, nil
}

func (m *Manager) netChanged() error {
	if m.onNet != nil {
		return m.onNet()
	}
	return nil
}

// run watches pods bound to this node and feeds their workers until ctx ends.
func (m *Manager) run(ctx context.Context) {
	f := informers.NewSharedInformerFactoryWithOptions(m.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	}))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { m.observe(obj.(*v1.Pod)) },
		UpdateFunc: func(_, obj interface{}) { m.observe(obj.(*v1.Pod)) },
		DeleteFunc: func(obj interface{}) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				m.gone(pod.UID)
			}
		},
	})
	f.Start(ctx.Done())
	<-ctx.Done()
}

func (m *Manager) observe(pod *v1.Pod) {
	m.mu.Lock()
	w, ok := m.workers[pod.UID]
	if !ok {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			// A terminal pod from before a node restart: nothing to run, only to delete.
			if pod.DeletionTimestamp == nil {
				m.mu.Unlock()
				return
			}
		}
		w = newPodWorker(m, pod)
		m.workers[pod.UID] = w
		m.mu.Unlock()
		go w.run()
		return
	}
	m.mu.Unlock()
	w.update(pod)
}

func (m *Manager) gone(uid types.UID) {
	m.mu.Lock()
	w := m.workers[uid]
	m.mu.Unlock()
	if w != nil {
		w.update(nil)
	}
}

func (m *Manager) forget(uid types.UID) {
	m.mu.Lock()
	delete(m.workers, uid)
	m.mu.Unlock()
}

// finalDelete removes the pod object once its processes are gone, as the kubelet does.
func (m *Manager) finalDelete(ctx context.Context, pod *v1.Pod) {
	zero := int64(0)
	err := m.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		klog.Warningf("pod %s/%s: final delete: %v", pod.Namespace, pod.Name, err)
	}
}

// find returns the worker of the current pod ns/name and the named container.
func (m *Manager) find(ns, name, ctr string) (*podWorker, *container) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range m.workers {
		w.mu.Lock()
		pod := w.pod
		w.mu.Unlock()
		if pod == nil || pod.Namespace != ns || pod.Name != name {
			continue
		}
		for _, c := range append(append(append([]*container{}, w.ctrs...), w.inits...), w.ephs...) {
			if c.spec.Name == ctr || (ctr == "" && !c.isInit) {
				return w, c
			}
		}
		return w, nil
	}
	return nil, nil
}

// podIPs is what the policy and DNS code need to know of running pods.
func (m *Manager) podIPs() map[types.UID]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[types.UID]string{}
	for uid, w := range m.workers {
		w.mu.Lock()
		if w.ip != "" {
			out[uid] = w.ip
		}
		w.mu.Unlock()
	}
	return out
}

func (m *Manager) stopAll() {
	m.mu.Lock()
	ws := make([]*podWorker, 0, len(m.workers))
	for _, w := range m.workers {
		ws = append(ws, w)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.killAll(2 * time.Second); w.teardown() }()
	}
	wg.Wait()
}
