package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
)

// probeState counts consecutive outcomes of one probe of one container run.
type probeState struct {
	ok        bool // readiness: ready; startup: started
	successes int32
	failures  int32
	lastRun   time.Time
}

type probes struct{ startup, liveness, readiness probeState }

// probeContainer runs whichever of the container's probes are due, as the kubelet
// documents: startup gates the others, liveness failures restart, readiness gates Ready.
func (w *podWorker) probeContainer(ctx context.Context, pod *v1.Pod, c *container) {
	w.mu.Lock()
	running, startedAt := c.running, c.startedAt
	w.mu.Unlock()
	if !running {
		return
	}
	spec := c.spec
	started := spec.StartupProbe == nil || c.probes.startup.ok
	if !started {
		if w.runProbe(ctx, pod, c, spec.StartupProbe, &c.probes.startup, startedAt) && c.probes.startup.failures >= threshold(spec.StartupProbe.FailureThreshold, 3) {
			w.kill(pod, c, "startup")
		}
		return
	}
	if p := spec.LivenessProbe; p != nil {
		if w.runProbe(ctx, pod, c, p, &c.probes.liveness, startedAt) && c.probes.liveness.failures >= threshold(p.FailureThreshold, 3) {
			w.kill(pod, c, "liveness")
			return
		}
	}
	if p := spec.ReadinessProbe; p != nil {
		w.runProbe(ctx, pod, c, p, &c.probes.readiness, startedAt)
	}
}

func threshold(v, def int32) int32 {
	if v <= 0 {
		return def
	}
	return v
}

// runProbe runs p when due and updates st; it reports whether it ran.
func (w *podWorker) runProbe(ctx context.Context, pod *v1.Pod, c *container, p *v1.Probe, st *probeState, startedAt time.Time) bool {
	now := time.Now()
	period := time.Duration(threshold(p.PeriodSeconds, 10)) * time.Second
	if st.lastRun.IsZero() {
		if now.Before(startedAt.Add(time.Duration(p.InitialDelaySeconds) * time.Second)) {
			return false
		}
	} else if now.Before(st.lastRun.Add(period)) {
		return false
	}
	st.lastRun = now
	timeout := time.Duration(threshold(p.TimeoutSeconds, 1)) * time.Second
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := w.probeOnce(pctx, pod, c, p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		st.successes, st.failures = st.successes+1, 0
		if st.successes >= threshold(p.SuccessThreshold, 1) {
			st.ok = true
		}
	} else {
		st.failures, st.successes = st.failures+1, 0
		if st.failures >= threshold(p.FailureThreshold, 3) {
			st.ok = false
		}
		klog.V(2).Infof("pod %s/%s container %s: probe failed: %v", pod.Namespace, pod.Name, c.spec.Name, err)
	}
	return true
}

func (w *podWorker) kill(pod *v1.Pod, c *container, which string) {
	klog.Infof("pod %s/%s container %s failed its %s probe; restarting it", pod.Namespace, pod.Name, c.spec.Name, which)
	grace := 30 * time.Second
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	go w.stop(c, grace)
}

type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len() < 10240 {
		b.Buffer.Write(p)
	}
	return len(p), nil
}
func (b *limitedBuffer) Close() error { return nil }

func (w *podWorker) probeOnce(ctx context.Context, pod *v1.Pod, c *container, p *v1.Probe) error {
	h := p.ProbeHandler
	switch {
	case h.Exec != nil:
		var out limitedBuffer
		return w.m.execIn(ctx, w, c, h.Exec.Command, nil, &out, &out, false, nil)
	case h.HTTPGet != nil:
		port, err := probePort(h.HTTPGet.Port, &c.spec)
		if err != nil {
			return err
		}
		host := h.HTTPGet.Host
		if host == "" {
			host = w.ip
		}
		scheme := strings.ToLower(string(h.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		path := h.HTTPGet.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), path), nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "kube-probe/1.36")
		for _, hd := range h.HTTPGet.HTTPHeaders {
			req.Header.Set(hd.Name, hd.Value)
		}
		// The kubelet does not verify probe certificates either.
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
		}
		return nil
	case h.TCPSocket != nil:
		port, err := probePort(h.TCPSocket.Port, &c.spec)
		if err != nil {
			return err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = w.ip
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			conn.Close()
		}
		return err
	}
	return nil // gRPC probes are not implemented by the local node: they pass
}

func probePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no container port named %q", p.StrVal)
}
