package node

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// outsideMain is the outside world's HTTP server; it runs inside the outside namespace.
func outsideMain(args []string) int {
	fs := flag.NewFlagSet("outside", flag.ContinueOnError)
	addr := fs.String("listen", ":80", "listen address")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "hello from the outside world (%s asked for %s)\n", r.RemoteAddr, r.URL.Path)
	})
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintln(os.Stderr, srv.ListenAndServe())
	return 1
}

// superviseOutside runs `node outside` in its namespace, restarting it if it dies, and
// publishes the URLs once it answers.
func superviseOutside(ctx context.Context, p paths, self string) {
	logf, _ := os.OpenFile(filepath.Join(p.dir, "logs", "node-outside.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	published := false
	for ctx.Err() == nil {
		cmd := exec.Command("nsenter", "--net="+netnsPath(outsideNS), "--", self, "node", "outside")
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			klog.Errorf("outside server: %v", err)
			time.Sleep(time.Second)
			continue
		}
		_ = os.WriteFile(p.node("outside.pid"), []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)
		if !published {
			go func() {
				client := &http.Client{Timeout: time.Second}
				for i := 0; i < 100 && ctx.Err() == nil; i++ {
					if resp, err := client.Get("http://" + outsideIP + "/"); err == nil {
						resp.Body.Close()
						_ = os.WriteFile(filepath.Join(p.dir, "outside-url"), []byte("http://"+outsideDNS+"/\n"), 0o644)
						_ = os.WriteFile(filepath.Join(p.dir, "outside-url-ip"), []byte("http://"+outsideIP+"/\n"), 0o644)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
			published = true
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			return
		case <-done:
			time.Sleep(time.Second)
		}
	}
}

// setHostsEntry adds or removes the outside name in /etc/hosts. The file is rewritten in
// place because it is often a bind mount that cannot be replaced by rename.
func setHostsEntry(present bool) error {
	data, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return err
	}
	var keep []string
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if !strings.Contains(line, hostsMark) {
			keep = append(keep, line)
		}
	}
	if present {
		keep = append(keep, fmt.Sprintf("%s\t%s %s", outsideIP, outsideDNS, hostsMark))
	}
	out := strings.Join(keep, "\n") + "\n"
	if out == string(data) {
		return nil
	}
	return os.WriteFile("/etc/hosts", []byte(out), 0o644)
}
