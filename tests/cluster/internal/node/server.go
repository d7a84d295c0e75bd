package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
)

const (
	streamIdle     = 4 * time.Hour
	streamCreation = 30 * time.Second
)

// kubeletServer serves the kubelet API subset the apiserver proxies to: exec, attach,
// portForward and containerLogs.
type kubeletServer struct{ m *Manager }

func (s *kubeletServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/exec/{ns}/{pod}/{ctr}", s.exec)
	mux.HandleFunc("/exec/{ns}/{pod}/{uid}/{ctr}", s.exec)
	mux.HandleFunc("/attach/{ns}/{pod}/{ctr}", s.attach)
	mux.HandleFunc("/attach/{ns}/{pod}/{uid}/{ctr}", s.attach)
	mux.HandleFunc("/portForward/{ns}/{pod}", s.portForward)
	mux.HandleFunc("/portForward/{ns}/{pod}/{uid}", s.portForward)
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{ctr}", s.logs)
	return mux
}

func (s *kubeletServer) exec(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	remotecommand.ServeExec(w, r, s, r.PathValue("ns")+"/"+r.PathValue("pod"), "", r.PathValue("ctr"), cmd, opts,
		streamIdle, streamCreation, remotecommand.SupportedStreamingProtocols)
}

func (s *kubeletServer) attach(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	remotecommand.ServeAttach(w, r, s, r.PathValue("ns")+"/"+r.PathValue("pod"), "", r.PathValue("ctr"), opts,
		streamIdle, streamCreation, remotecommand.SupportedStreamingProtocols)
}

func (s *kubeletServer) portForward(w http.ResponseWriter, r *http.Request) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	portforward.ServePortForward(w, r, s, r.PathValue("ns")+"/"+r.PathValue("pod"), "", opts,
		streamIdle, streamCreation, portforward.SupportedProtocols)
}

func (s *kubeletServer) lookup(podName, ctr string) (*podWorker, *container, error) {
	ns, name, _ := strings.Cut(podName, "/")
	w, c := s.m.find(ns, name, ctr)
	if w == nil {
		return nil, nil, fmt.Errorf("pod %s not found on this node", podName)
	}
	if c == nil {
		return w, nil, fmt.Errorf("container %q not found in pod %s", ctr, podName)
	}
	return w, c, nil
}

// PortForward connects the stream to the pod's address from the host side.
func (s *kubeletServer) PortForward(ctx context.Context, name, _ string, port int32, stream io.ReadWriteCloser) error {
	w, _, _ := s.lookup(name, "")
	if w == nil || w.ip == "" {
		return fmt.Errorf("pod %s has no address", name)
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(w.ip, strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, stream); done <- struct{}{} }()
	go func() { _, _ = io.Copy(stream, conn); done <- struct{}{} }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// AttachContainer streams the container's output from now on; the local node does not
// keep containers' stdin open, so input is ignored.
func (s *kubeletServer) AttachContainer(ctx context.Context, name, _, ctr string, in io.Reader, out, errw io.WriteCloser, tty bool, _ <-chan remotecommand.TerminalSize) error {
	w, c, err := s.lookup(name, ctr)
	if err != nil {
		return err
	}
	w.mu.Lock()
	path, restart := c.logPath(s.m.paths, string(w.uid), c.restartCount), c.restartCount
	w.mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, _ = f.Seek(0, io.SeekEnd)
	if out == nil {
		out = errw
	}
	return follow(ctx, f, out, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return c.running && c.restartCount == restart
	})
}

// follow copies new data from f until alive() is false or ctx ends.
func follow(ctx context.Context, f *os.File, out io.Writer, alive func() bool) error {
	buf := make([]byte, 32*1024)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return nil
			}
			if fl, ok := out.(http.Flusher); ok {
				fl.Flush()
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if !alive() {
			// One last read: the container may have written just before it exited.
			if n, _ := f.Read(buf); n > 0 {
				_, _ = out.Write(buf[:n])
				continue
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// serve listens on the kubelet port with a serving cert signed by the cluster CA and
// accepts only clients whose certificate that CA signed (the apiserver).
func (s *kubeletServer) serve(ctx context.Context, port int) error {
	cert, err := servingCert(s.m.paths)
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(s.m.paths.pki("ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	srv := &http.Server{
		Addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Handler: s.handler(),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	klog.Infof("kubelet API on https://%s", srv.Addr)
	if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
