package node

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer answers A queries from a records file the node writes; everything else is
// NXDOMAIN. It never forwards: pods must not reach resolvers beyond this machine.
type dnsServer struct {
	file    string
	mu      sync.Mutex
	mtime   time.Time
	records map[string][]net.IP
}

func dnsMain(args []string) int {
	fs := flag.NewFlagSet("dns", flag.ContinueOnError)
	file := fs.String("records", "/rossoctl/dns/records", "records file: NAME IP per line")
	addr := fs.String("listen", ":53", "address to answer on (udp and tcp)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	s := &dnsServer{file: *file}
	pc, err := net.ListenPacket("udp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("dns: answering on %s from %s\n", *addr, *file)
	go s.serveTCP(ln)
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			continue
		}
		if resp := s.answer(buf[:n]); resp != nil {
			_, _ = pc.WriteTo(resp, from)
		}
	}
}

func (s *dnsServer) serveTCP(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			var l [2]byte
			for {
				if _, err := io.ReadFull(conn, l[:]); err != nil {
					return
				}
				msg := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(conn, msg); err != nil {
					return
				}
				resp := s.answer(msg)
				if resp == nil {
					return
				}
				_, _ = conn.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(resp))), resp...))
			}
		}()
	}
}

func (s *dnsServer) lookup(name string) ([]net.IP, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi, err := os.Stat(s.file); err == nil && !fi.ModTime().Equal(s.mtime) {
		s.mtime, s.records = fi.ModTime(), parseRecords(s.file)
	}
	ips, ok := s.records[strings.ToLower(strings.TrimSuffix(name, "."))]
	return ips, ok
}

func parseRecords(file string) map[string][]net.IP {
	out := map[string][]net.IP{}
	data, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			if ip := net.ParseIP(f[1]).To4(); ip != nil {
				name := strings.ToLower(f[0])
				out[name] = append(out[name], ip)
			}
		}
	}
	return out
}

func (s *dnsServer) answer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	ips, known := s.lookup(q.Name.String())
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	if q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET {
		for _, ip := range ips {
			var a dnsmessage.AResource
			copy(a.A[:], ip)
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 5}, a)
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
