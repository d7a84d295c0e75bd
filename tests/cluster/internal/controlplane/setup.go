package controlplane

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigSpec maps a kubeconfig file in the state dir to a client certificate in pki/.
type kubeconfigSpec struct {
	file, cert, user, namespace string
}

var kubeconfigs = []kubeconfigSpec{
	{file: "kubeconfig", cert: "admin", user: "admin"},
	{file: "kubeconfig-limited", cert: "limited", user: "limited", namespace: "limited"},
	{file: "kubeconfig-node", cert: "node", user: "system:node:local-node"},
	{file: "kubeconfig-controller-manager", cert: "controller-manager", user: "system:kube-controller-manager"},
	{file: "kubeconfig-scheduler", cert: "scheduler", user: "system:kube-scheduler"},
}

// PKIMain creates DIR/pki (once) and writes every kubeconfig for the given apiserver port.
func PKIMain(args []string) int {
	fs := flag.NewFlagSet("pki", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "local cluster state directory (required)")
	port := fs.Int("apiserver-port", 0, "apiserver port on 127.0.0.1 (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *stateDir == "" || *port == 0 {
		fmt.Fprintln(os.Stderr, "pki: --state-dir and --apiserver-port are required")
		return 2
	}
	pki := filepath.Join(*stateDir, "pki")
	if err := ensurePKI(pki); err != nil {
		fmt.Fprintf(os.Stderr, "pki: %v\n", err)
		return 1
	}
	server := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	for _, k := range kubeconfigs {
		if err := writeKubeconfig(*stateDir, pki, server, k); err != nil {
			fmt.Fprintf(os.Stderr, "pki: %s: %v\n", k.file, err)
			return 1
		}
	}
	return 0
}

// writeKubeconfig embeds the CA and client credentials so the file works when copied elsewhere.
func writeKubeconfig(stateDir, pki, server string, k kubeconfigSpec) error {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(pki, name)) }
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	crt, err := read(k.cert + ".crt")
	if err != nil {
		return err
	}
	key, err := read(k.cert + ".key")
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[k.user] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: k.user, Namespace: k.namespace}
	cfg.CurrentContext = "local"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	path := filepath.Join(stateDir, k.file)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil // unchanged: leave the file alone for readers that hold it open
	}
	// Write then rename, so a concurrent reader never sees a half-written kubeconfig.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// FreePortsMain prints N distinct free TCP ports on 127.0.0.1, one a line. They are picked
// below the kernel's ephemeral range so an outgoing connection cannot grab one before (or
// between) the component restarts that bind it.
// The Service NodePort range (the apiserver's default --service-node-port-range).
const nodePortLow, nodePortHigh = 30000, 32767

func FreePortsMain(args []string) int {
	n := 1
	if len(args) > 0 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v < 1 {
			fmt.Fprintln(os.Stderr, "usage: localcluster free-ports [N]")
			return 2
		}
		n = v
	}
	low, high := 20000, ephemeralLow()
	if high-low < 1000 {
		low = 10000
	}
	// Hold every listener until all are chosen so no port is handed out twice.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for tries := 0; len(ls) < n; tries++ {
		if tries > 10000 {
			fmt.Fprintln(os.Stderr, "free-ports: no free port found")
			return 1
		}
		port := low + rand.IntN(high-low)
		// Never in the NodePort range: kube-router accepts every packet to a node address on
		// 30000-32767 before a pod's egress rules, so an apiserver (or kubelet, etcd) there is
		// reachable from every default-deny pod, and verify rightly fails egress on it.
		if port >= nodePortLow && port <= nodePortHigh {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		fmt.Println(port)
	}
	return 0
}

// ephemeralLow reads the first port the kernel uses for outgoing connections.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				return v
			}
		}
	}
	return 32768
}
