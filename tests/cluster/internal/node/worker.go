package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// podWorker owns one pod UID from first sight until its teardown.
type podWorker struct {
	m    *Manager
	uid  types.UID
	kick chan struct{}

	mu       sync.Mutex
	pod      *v1.Pod // latest object from the informer; nil once deleted from the API
	ip       string
	ready    bool // sandbox (network, volumes, /etc files) is set up
	setupErr string
	volumes  map[string]*volume
	started  time.Time
	inits    []*container
	ctrs     []*container
	ephs     []*container // ephemeral containers, in the order they were added
	phase    v1.PodPhase // Succeeded/Failed once terminal
	reason   string
	message  string
	last     *v1.PodStatus
}

func newPodWorker(m *Manager, pod *v1.Pod) *podWorker {
	w := &podWorker{m: m, uid: pod.UID, pod: pod, kick: make(chan struct{}, 1), volumes: map[string]*volume{}}
	for _, c := range pod.Spec.InitContainers {
		w.inits = append(w.inits, &container{spec: c, isInit: true, waiting: "PodInitializing"})
	}
	for _, c := range pod.Spec.Containers {
		reason := "ContainerCreating"
		if len(w.inits) > 0 {
			reason = "PodInitializing"
		}
		w.ctrs = append(w.ctrs, &container{spec: c, waiting: reason})
	}
	return w
}

func (w *podWorker) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *podWorker) update(pod *v1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
	w.wake()
}

func (w *podWorker) run() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if w.sync() {
			return
		}
		select {
		case <-w.kick:
		case <-tick.C:
		}
	}
}

// sync moves the pod one step toward its spec; true means the worker is finished.
func (w *podWorker) sync() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.mu.Lock()
	pod := w.pod
	w.mu.Unlock()
	if pod == nil || pod.DeletionTimestamp != nil {
		grace := 30 * time.Second
		if pod != nil && pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		w.killAll(grace)
		w.teardown()
		if pod != nil {
			w.m.finalDelete(ctx, pod)
		}
		w.m.forget(w.uid)
		return true
	}
	if w.phase == "" {
		w.step(ctx, pod)
	}
	w.pushStatus(ctx, pod)
	return false
}

func (w *podWorker) step(ctx context.Context, pod *v1.Pod) {
	if !w.ready {
		if w.started.IsZero() {
			w.started = time.Now()
		}
		if err := w.setup(ctx, pod); err != nil {
			klog.Warningf("pod %s/%s: setup: %v", pod.Namespace, pod.Name, err)
			w.mu.Lock()
			w.setupErr = err.Error()
			w.mu.Unlock()
			return
		}
		w.mu.Lock()
		w.ready, w.setupErr = true, ""
		w.mu.Unlock()
	}
	w.refreshTokens(ctx, pod)
	if ads := pod.Spec.ActiveDeadlineSeconds; ads != nil && time.Since(w.started) >= time.Duration(*ads)*time.Second {
		w.killAll(0)
		w.setTerminal(v1.PodFailed, "DeadlineExceeded", fmt.Sprintf("Pod was active on the node longer than the specified deadline"))
		return
	}
	policy := pod.Spec.RestartPolicy
	for _, c := range w.inits {
		w.mu.Lock()
		running, term := c.running, c.term
		w.mu.Unlock()
		if running {
			return
		}
		if term != nil && term.ExitCode == 0 {
			continue
		}
		if term != nil && policy == v1.RestartPolicyNever {
			w.killAll(0)
			w.setTerminal(v1.PodFailed, "", "")
			return
		}
		w.startOrBackoff(ctx, pod, c)
		return
	}
	w.startEphemerals(ctx, pod)
	allDone, anyFailed := true, false
	for _, c := range w.ctrs {
		w.mu.Lock()
		running, term := c.running, c.term
		w.mu.Unlock()
		if running {
			allDone = false
			w.probeContainer(ctx, pod, c)
			continue
		}
		if term == nil {
			allDone = false
			w.startOrBackoff(ctx, pod, c)
			continue
		}
		restart := policy == v1.RestartPolicyAlways || policy == "" || (policy == v1.RestartPolicyOnFailure && term.ExitCode != 0)
		if restart {
			allDone = false
			w.startOrBackoff(ctx, pod, c)
			continue
		}
		anyFailed = anyFailed || term.ExitCode != 0
	}
	if allDone {
		phase := v1.PodSucceeded
		if anyFailed {
			phase = v1.PodFailed
		}
		w.setTerminal(phase, "", "")
	}
}

// startOrBackoff starts a container now or, after a crash, once its back-off has passed
// since it exited (as the kubelet: the first restart is immediate, then 10s doubling to 5m).
func (w *podWorker) startOrBackoff(ctx context.Context, pod *v1.Pod, c *container) {
	w.mu.Lock()
	restart := c.term != nil
	if restart {
		if time.Since(c.term.FinishedAt.Time) < c.backoff {
			w.mu.Unlock()
			return
		}
		if c.term.FinishedAt.Sub(c.term.StartedAt.Time) > 10*time.Minute {
			c.backoff = 0 // it ran long enough to be considered healthy again
		}
		c.last, c.term = c.term, nil
		c.restartCount++
	}
	w.mu.Unlock()
	err := w.start(ctx, pod, c)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		c.waiting, c.waitingMsg = "CreateContainerError", err.Error()
		var ce *configError
		var pe *pullError
		if errors.As(err, &ce) {
			c.waiting = "CreateContainerConfigError"
		} else if errors.As(err, &pe) {
			c.waiting = pe.reason
		}
		if restart {
			c.restartCount--
			c.term = c.last
		}
		return
	}
	if restart {
		c.backoff = min(max(c.backoff*2, 10*time.Second), 5*time.Minute)
	}
}

func (w *podWorker) setTerminal(phase v1.PodPhase, reason, message string) {
	w.mu.Lock()
	w.phase, w.reason, w.message = phase, reason, message
	w.mu.Unlock()
}

func (w *podWorker) killAll(grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range append(append(append([]*container{}, w.inits...), w.ctrs...), w.ephs...) {
		wg.Add(1)
		go func() { defer wg.Done(); w.stop(c, grace) }()
	}
	wg.Wait()
}

// setup creates the pod sandbox: directories, /etc files, network, volumes.
func (w *podWorker) setup(ctx context.Context, pod *v1.Pod) error {
	uid := string(pod.UID)
	if pod.Spec.HostNetwork && w.ip == "" {
		w.mu.Lock()
		w.ip = "127.0.0.1" // the node's address, as for any host-network pod
		w.mu.Unlock()
	}
	if w.ip == "" {
		ip, err := w.m.ipam.allocate(uid)
		if err != nil {
			return err
		}
		if err := setupPodNetwork(uid, ip); err != nil {
			teardownPodNetwork(uid)
			w.m.ipam.release(uid)
			return err
		}
		w.mu.Lock()
		w.ip = ip
		w.mu.Unlock()
		// Fail closed: no container starts before the rules that may isolate it are loaded.
		if err := w.m.netChanged(); err != nil {
			return err
		}
	}
	if err := writeEtcFiles(w.m.paths, pod, w.ip); err != nil {
		return err
	}
	for _, v := range pod.Spec.Volumes {
		if _, ok := w.volumes[v.Name]; ok {
			continue
		}
		vol, err := w.setupVolume(ctx, pod, v)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.volumes[v.Name] = vol
		w.mu.Unlock()
	}
	return nil
}

func (w *podWorker) refreshTokens(ctx context.Context, pod *v1.Pod) {
	for _, v := range pod.Spec.Volumes {
		vol := w.volumes[v.Name]
		if vol == nil || vol.refreshAt.IsZero() || time.Now().Before(vol.refreshAt) {
			continue
		}
		if nv, err := w.setupVolume(ctx, pod, v); err == nil {
			w.mu.Lock()
			w.volumes[v.Name] = nv
			w.mu.Unlock()
		}
	}
}

// teardown removes everything of the pod from the host except PVC and hostPath data.
func (w *podWorker) teardown() {
	uid := string(w.uid)
	removeCgroupTree(uid)
	teardownPodNetwork(uid)
	w.m.ipam.release(uid)
	_ = w.m.netChanged()
	dir := w.m.paths.pod(uid)
	for _, mp := range mountsUnder(dir) {
		_ = unmountDetach(mp)
	}
	if len(mountsUnder(dir)) == 0 {
		_ = os.RemoveAll(dir)
	}
}

func writeEtcFiles(p paths, pod *v1.Pod, ip string) error {
	uid := string(pod.UID)
	host := podHostname(pod)
	fqdn := host
	if pod.Spec.Subdomain != "" {
		fqdn = fmt.Sprintf("%s.%s.%s.svc.cluster.local\t%s", host, pod.Spec.Subdomain, pod.Namespace, host)
	}
	hosts := fmt.Sprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s\n", ip, fqdn)
	for _, ha := range pod.Spec.HostAliases {
		hosts += ha.IP + "\t" + strings.Join(ha.Hostnames, " ") + "\n"
	}
	search := []string{pod.Namespace + ".svc.cluster.local", "svc.cluster.local", "cluster.local"}
	ns, opts := []string{dnsIP}, []string{"ndots:5"}
	if dc := pod.Spec.DNSConfig; dc != nil {
		if pod.Spec.DNSPolicy == v1.DNSNone {
			ns, search, opts = nil, nil, nil
		}
		ns, search = append(ns, dc.Nameservers...), append(search, dc.Searches...)
		for _, o := range dc.Options {
			if o.Value != nil {
				opts = append(opts, o.Name+":"+*o.Value)
			} else {
				opts = append(opts, o.Name)
			}
		}
	}
	var resolv strings.Builder
	if len(search) > 0 {
		fmt.Fprintf(&resolv, "search %s\n", strings.Join(search, " "))
	}
	for _, n := range ns {
		fmt.Fprintf(&resolv, "nameserver %s\n", n)
	}
	if len(opts) > 0 {
		fmt.Fprintf(&resolv, "options %s\n", strings.Join(opts, " "))
	}
	dir := p.pod(uid, "etc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range map[string]string{"hosts": hosts, "resolv.conf": resolv.String(), "hostname": host + "\n"} {
		if err := os.WriteFile(dir+"/"+name, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var _ = metav1.Now
