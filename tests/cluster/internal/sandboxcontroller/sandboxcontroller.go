// Package sandboxcontroller reconciles agents.x-k8s.io Sandboxes into Pods, a small
// stand-in for the upstream agent-sandbox controller with the same observable behaviour.
package sandboxcontroller

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// Main runs the controller until SIGINT or SIGTERM.
func Main(args []string) int {
	fs := flag.NewFlagSet("sandbox-controller", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (empty: in-cluster config)")
	workers := fs.Int("workers", 2, "sandboxes reconciled in parallel")
	resync := fs.Duration("resync", 10*time.Minute, "full resync period of the informers")
	health := fs.String("health-probe-bind-address", "", "serve /healthz and /readyz here (e.g. 127.0.0.1:8081; empty: off)")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := loadConfig(*kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-controller:", err)
		return 1
	}
	// Restart latency matters more than politeness on a test cluster.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "sandbox-controller"

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-controller:", err)
		return 1
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-controller:", err)
		return 1
	}
	var ready atomic.Bool
	if *health != "" {
		if err := serveHealth(ctx, *health, &ready); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox-controller:", err)
			return 1
		}
	}
	version, err := waitForCRD(ctx, kube.Discovery())
	if err != nil {
		return 0 // stopped before the CRD appeared
	}
	c := New(kube, dyn, GVR(version), *resync)
	c.onSynced = func() { ready.Store(true) }
	if err := c.Run(ctx, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-controller:", err)
		return 1
	}
	klog.Info("sandbox-controller: stopped")
	return 0
}

// serveHealth answers /healthz while the process lives and /readyz once caches synced.
func serveHealth(ctx context.Context, addr string, ready *atomic.Bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return nil
}

func loadConfig(path string) (*rest.Config, error) {
	if path == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", path)
}

// waitForCRD polls discovery until some Sandbox version we speak is served, since the
// controller may start before the CRD is installed.
func waitForCRD(ctx context.Context, d discovery.DiscoveryInterface) (string, error) {
	logged := false
	for {
		for _, v := range Versions {
			rl, err := d.ServerResourcesForGroupVersion(Group + "/" + v)
			if err != nil {
				continue
			}
			for _, r := range rl.APIResources {
				if r.Name == Resource {
					return v, nil
				}
			}
		}
		if !logged {
			klog.Infof("sandbox-controller: waiting for the %s.%s CRD", Resource, Group)
			logged = true
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
