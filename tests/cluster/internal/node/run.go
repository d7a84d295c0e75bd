package node

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"rossoctl.dev/localcluster/internal/provisioner"
)

func runMain(args []string) int {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	dir := stateDirFlag(fs)
	capa := capacity{}
	fs.StringVar(&capa.cpu, "cpu", "32", "cpu capacity to advertise (overcommitted on purpose)")
	fs.StringVar(&capa.memory, "memory", strconv.FormatUint(totalMemory(), 10), "memory capacity to advertise")
	fs.StringVar(&capa.pods, "pods", "250", "pod capacity (the pod CIDR has 253 addresses)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// Descriptors inherited from whoever started the node (a driver's lock file, say) must
	// never reach pod processes: Go passes on any fd that lacks close-on-exec.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	p, err := absStateDir(*dir)
	if err == nil {
		err = runNode(p, capa)
	}
	if err != nil {
		klog.Errorf("node: %v", err)
		return 1
	}
	return 0
}

func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// Client-side throttling at the defaults (5 qps) would dominate pod start latency.
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "rossoctl-local-node"
	return kubernetes.NewForConfig(cfg)
}

func kubeletPort(p paths) (int, error) {
	if v := readEnv(p)["KUBELET_PORT"]; v != "" {
		return strconv.Atoi(v)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port, appendEnv(p, "KUBELET_PORT", strconv.Itoa(port))
}

func runNode(p paths, capa capacity) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the local node needs root (namespaces, veth, nftables, cgroups)")
	}
	for _, d := range []string{p.node(), filepath.Join(p.dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	port, err := kubeletPort(p)
	if err != nil {
		return err
	}
	client, err := clientFor(filepath.Join(p.dir, "kubeconfig-node"))
	if err != nil {
		return err
	}
	admin, err := clientFor(filepath.Join(p.dir, "kubeconfig"))
	if err != nil {
		return err
	}
	// A previous run's pods did not survive it: start from a clean host.
	cleanupHost(p, true)
	if err := setupHostNetwork(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	nc := newNetController(p, admin)
	m, err := newManager(p, client, func() error {
		err := nc.apply()
		if err != nil {
			klog.Errorf("network rules: %v", err)
		}
		return err
	})
	if err != nil {
		return err
	}
	nc.m = m
	if err := nc.start(ctx); err != nil {
		return err
	}
	if err := setHostsEntry(true); err != nil {
		klog.Warningf("/etc/hosts: %v", err)
	}
	go superviseOutside(ctx, p, m.self)
	srv := &kubeletServer{m: m}
	go func() {
		if err := srv.serve(ctx, port); err != nil {
			klog.Errorf("kubelet server: %v", err)
			stop()
		}
	}()
	for {
		if err = register(ctx, client, capa, port); err == nil || ctx.Err() != nil {
			break
		}
		klog.Warningf("register node: %v", err)
		time.Sleep(time.Second)
	}
	klog.Infof("node %s registered, kubelet port %d", nodeName, port)
	go heartbeat(ctx, client, capa, port)
	go ensureAddons(ctx, admin, p, m.self)
	go provisioner.Run(ctx, admin, p.node("pvcs"))
	go m.run(ctx)
	<-ctx.Done()
	klog.Infof("node stopping: killing pods")
	m.stopAll()
	cleanupHost(p, true)
	return nil
}
