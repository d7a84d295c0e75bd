package controlplane

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// EtcdMain runs a single-member embedded etcd on loopback until SIGTERM/SIGINT.
func EtcdMain(args []string) int {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "etcd data directory (required)")
	port := fs.Int("port", 2379, "client port on 127.0.0.1")
	peerPort := fs.Int("peer-port", 2380, "peer port on 127.0.0.1")
	// Durability across host crashes is worthless for a throwaway test cluster; fsync latency is not.
	noFsync := fs.Bool("unsafe-no-fsync", true, "skip fsync (state is thrown away at down)")
	logLevel := fs.String("log-level", "warn", "etcd log level")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		return 2
	}

	cfg := embed.NewConfig()
	cfg.Name = "local"
	cfg.Dir = *dataDir
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *port)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = *noFsync
	cfg.LogLevel = *logLevel
	cfg.LogOutputs = []string{"stderr"}
	// The apiserver compacts on its own, but keep etcd's history bounded too, as kubeadm does.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "1h"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: start: %v\n", err)
		return 1
	}
	defer e.Close()

	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready on %s\n", client.String())
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		return 1
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "etcd: %v, stopping\n", s)
		return 0
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 1
	}
}
