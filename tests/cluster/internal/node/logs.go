package node

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// logs serves /containerLogs with follow, previous, tailLines and limitBytes.
func (s *kubeletServer) logs(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w, c, err := s.lookup(r.PathValue("ns")+"/"+r.PathValue("pod"), r.PathValue("ctr"))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	w.mu.Lock()
	restart, hasRun := c.restartCount, c.running || c.term != nil
	w.mu.Unlock()
	if q.Get("previous") == "true" {
		if restart == 0 {
			http.Error(rw, "previous terminated container "+c.spec.Name+" not found", http.StatusBadRequest)
			return
		}
		restart--
	} else if !hasRun {
		http.Error(rw, "container "+c.spec.Name+" is waiting to start", http.StatusBadRequest)
		return
	}
	f, err := os.Open(c.logPath(s.m.paths, string(w.uid), restart))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	defer f.Close()
	data, _ := readAllNow(f)
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		data = tailLines(data, n)
	}
	limit := -1
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n > 0 {
		limit = n
	}
	if limit >= 0 && len(data) > limit {
		data = data[:limit]
	}
	rw.Header().Set("Content-Type", "text/plain")
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(data)
	if fl, ok := rw.(http.Flusher); ok {
		fl.Flush()
	}
	if q.Get("follow") != "true" || q.Get("previous") == "true" || limit >= 0 {
		return
	}
	_ = follow(r.Context(), f, rw, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return c.running && c.restartCount == restart
	})
}

func readAllNow(f *os.File) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
}

func tailLines(data []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			n--
			if n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}

// servingCert issues the kubelet's serving certificate for 127.0.0.1 from the cluster CA.
func servingCert(p paths) (tls.Certificate, error) {
	ca, err := tls.LoadX509KeyPair(p.pki("ca.crt"), p.pki("ca.key"))
	if err != nil {
		return tls.Certificate{}, err
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{nodeName, "localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	_ = os.WriteFile(p.pki("kubelet-serving.crt"), certPEM, 0o644)
	_ = os.WriteFile(p.pki("kubelet-serving.key"), keyPEM, 0o600)
	return tls.X509KeyPair(certPEM, keyPEM)
}
