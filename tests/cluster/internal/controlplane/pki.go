package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certSpec describes one leaf certificate signed by the cluster CA.
type certSpec struct {
	name   string // file stem in DIR/pki
	cn     string
	orgs   []string
	server bool
	dns    []string
	ips    []net.IP
	// frontProxy signs with the front-proxy CA, which the apiserver trusts only for
	// requestheader (aggregated API) authentication.
	frontProxy bool
}

// leafCerts are the identities the control plane and the tests use, as kubeadm names them.
var leafCerts = []certSpec{
	{name: "apiserver", cn: "kube-apiserver", server: true,
		dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		ips: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}},
	{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client"},
	{name: "admin", cn: "admin", orgs: []string{"system:masters"}},
	{name: "limited", cn: "limited"},
	{name: "node", cn: "system:node:local-node", orgs: []string{"system:nodes"}},
	{name: "controller-manager", cn: "system:kube-controller-manager"},
	{name: "scheduler", cn: "system:kube-scheduler"},
	{name: "front-proxy-client", cn: "front-proxy-client", frontProxy: true},
}

// keyPair is a parsed certificate with its private key, used to sign leaves.
type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) }

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// loadOrCreateCA reads DIR/NAME.{crt,key}, creating them first when absent.
func loadOrCreateCA(dir, name, cn string) (*keyPair, error) {
	crtPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if errors.Is(err, os.ErrNotExist) {
		return newCA(dir, name, cn)
	} else if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(crtPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s: not PEM", name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: key cannot sign", name)
	}
	return &keyPair{cert: cert, key: signer}, nil
}

func newCA(dir, name, cn string) (*keyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour), // tolerate small clock skew between processes
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644); err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key}, nil
}

func (ca *keyPair) issue(dir string, s certSpec) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: s.cn, Organization: s.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     s.dns,
		IPAddresses:  s.ips,
	}
	if s.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, s.name+".key"), key); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, s.name+".crt"), "CERTIFICATE", der, 0o644)
}

// writeSAKeys writes the service-account token signing key pair (sa.key, sa.pub).
func writeSAKeys(dir string) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), key); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub, 0o644)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ensurePKI fills in whatever DIR/pki lacks; existing files are kept so a restarted
// cluster keeps trusting the certificates it handed out.
func ensurePKI(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := loadOrCreateCA(dir, "ca", "rossoctl-local-ca")
	if err != nil {
		return fmt.Errorf("CA: %w", err)
	}
	frontProxy, err := loadOrCreateCA(dir, "front-proxy-ca", "rossoctl-local-front-proxy-ca")
	if err != nil {
		return fmt.Errorf("front-proxy CA: %w", err)
	}
	for _, s := range leafCerts {
		if exists(filepath.Join(dir, s.name+".crt")) && exists(filepath.Join(dir, s.name+".key")) {
			continue
		}
		signer := ca
		if s.frontProxy {
			signer = frontProxy
		}
		if err := signer.issue(dir, s); err != nil {
			return fmt.Errorf("%s certificate: %w", s.name, err)
		}
	}
	if exists(filepath.Join(dir, "sa.key")) && exists(filepath.Join(dir, "sa.pub")) {
		return nil
	}
	return writeSAKeys(dir)
}
