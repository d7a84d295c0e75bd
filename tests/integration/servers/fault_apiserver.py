#!/usr/bin/env python3
"""A TLS front for the local cluster's apiserver that misbehaves on purpose, for rossoctl's
bad-input and fault tests.

It serves a certificate signed by the cluster CA (so rossoctl's normal TLS checks pass), writes a
kubeconfig that points at itself, prints its port on stdout, and then either forwards each request
to the real apiserver with the admin client certificate, or answers it according to the first
matching --rule. Every request is logged to --log as "METHOD PATH -> ACTION".

Rules: "METHOD PATH_REGEX ACTION [COUNT]" (METHOD may be *; COUNT = how many matching requests the
rule applies to, default unlimited). Actions:
  429:SECONDS  answer 429 Too Many Requests with Retry-After: SECONDS
  503          answer 503 Service Unavailable (a metav1.Status body)
  html         answer 200 with an HTML page
  close        send the status line and half the headers, then close the connection
  half         send a JSON response whose body stops halfway, then close
  hang         send 200 and chunked headers, then nothing until the client goes away
  delay:SECONDS  wait, then forward
  cut:BYTES    forward, but close both sides after BYTES bytes of the upstream response
  replace-pod  (for DELETE .../pods/NAME) delete the pod upstream without precondition and wait
               for the controller's replacement, then forward the original request
  pass         forward unchanged
"""
import argparse
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time

LOCK = threading.Lock()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cluster-dir", required=True)
    parser.add_argument("--kubeconfig-out", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--rule", action="append", default=[])
    return parser.parse_args()


class Rule:
    def __init__(self, text):
        parts = text.split()
        self.method, self.pattern, self.action = parts[0], re.compile(parts[1]), parts[2]
        self.remaining = int(parts[3]) if len(parts) > 3 else -1

    def take(self, method, path):
        if self.method not in ("*", method) or not self.pattern.search(path):
            return False
        with LOCK:
            if self.remaining == 0:
                return False
            if self.remaining > 0:
                self.remaining -= 1
        return True


def make_serving_cert(cluster_dir, workdir):
    key, csr, crt = (os.path.join(workdir, n) for n in ("proxy.key", "proxy.csr", "proxy.crt"))
    ext = os.path.join(workdir, "ext.cnf")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": True}
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-subj", "/CN=fault-apiserver", "-out", csr], **quiet)
    pki = os.path.join(cluster_dir, "pki")
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"),
                    "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", "1",
                    "-extfile", ext, "-out", crt, "-CAserial", os.path.join(workdir, "ca.srl")],
                   **quiet)
    return crt, key


def upstream_address(cluster_dir):
    with open(os.path.join(cluster_dir, "kubeconfig")) as f:
        match = re.search(r"server: https://([^:\s]+):(\d+)", f.read())
    return match.group(1), int(match.group(2))


def write_kubeconfig(cluster_dir, port, out):
    with open(os.path.join(cluster_dir, "kubeconfig")) as f:
        text = f.read()
    text = re.sub(r"server: https://\S+", "server: https://127.0.0.1:%d" % port, text)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, out)


class Proxy:
    def __init__(self, args):
        self.args = args
        self.rules = [Rule(r) for r in args.rule]
        self.upstream = upstream_address(args.cluster_dir)
        pki = os.path.join(args.cluster_dir, "pki")
        self.client_ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.client_ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.client_ctx.check_hostname = False
        self.client_ctx.set_alpn_protocols(["http/1.1"])
        self.log_file = open(args.log, "a", buffering=1)

    def log(self, line):
        with LOCK:
            self.log_file.write(line + "\n")

    def connect_upstream(self):
        raw = socket.create_connection(self.upstream)
        return self.client_ctx.wrap_socket(raw, server_hostname=self.upstream[0])

    def upstream_request(self, method, path, body=b""):
        """A request of the proxy's own (replace-pod); returns (status, body)."""
        sock = self.connect_upstream()
        head = "%s %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\nContent-Length: %d\r\n" % (
            method, path, self.upstream[0], len(body))
        if body:
            head += "Content-Type: application/json\r\n"
        sock.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        sock.close()
        status = int(data.split(b" ", 2)[1]) if data else 0
        return status, data.split(b"\r\n\r\n", 1)[-1]

    def replace_pod(self, path):
        path = path.split("?", 1)[0]
        status, body = self.upstream_request("GET", path)
        old_uid = json.loads(body)["metadata"]["uid"] if status == 200 else ""
        self.upstream_request("DELETE", path, b'{"gracePeriodSeconds":0}')
        deadline = time.time() + 60
        while time.time() < deadline:
            status, body = self.upstream_request("GET", path)
            new_uid = json.loads(body)["metadata"]["uid"] if status == 200 else old_uid
            if new_uid != old_uid:
                self.log("replaced pod %s (old uid %s, new uid %s)" % (path, old_uid, new_uid))
                return
            time.sleep(0.2)

    def serve(self, client):
        try:
            self.handle(client)
        except (OSError, ValueError, ssl.SSLError):
            pass
        finally:
            try:
                client.close()
            except OSError:
                pass

    def handle(self, client):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                return
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = [l for l in lines[1:] if l]
        length = 0
        for h in headers:
            if h.lower().startswith("content-length:"):
                length = int(h.split(":", 1)[1])
        while len(body) < length:
            chunk = client.recv(65536)
            if not chunk:
                return
            body += chunk
        upgrade = any(h.lower().startswith("upgrade:") for h in headers)
        action = "pass"
        for rule in self.rules:
            if rule.take(method, path):
                action = rule.action
                break
        self.log("%s %s -> %s" % (method, path, action))
        if action.startswith("429:"):
            self.reply(client, 429, "Too Many Requests", status_body(429, "TooManyRequests"),
                       ["Retry-After: " + action.split(":", 1)[1]])
        elif action == "503":
            self.reply(client, 503, "Service Unavailable", status_body(503, "ServiceUnavailable"))
        elif action == "html":
            page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Login</body></html>"
            self.reply(client, 200, "OK", page, content_type="text/html; charset=utf-8")
        elif action == "close":
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/js")
        elif action == "half":
            payload = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"x"}}'
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                           % len(payload) + payload[: len(payload) // 2])
        elif action == "hang":
            client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n")
            client.settimeout(None)
            while client.recv(65536):
                pass
        else:
            if action.startswith("delay:"):
                time.sleep(float(action.split(":", 1)[1]))
            elif action == "replace-pod":
                self.replace_pod(path)
            limit = int(action.split(":", 1)[1]) if action.startswith("cut:") else -1
            self.forward(client, method, path, headers, body, upgrade, limit)

    def reply(self, client, code, text, body, extra=(), content_type="application/json"):
        head = "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n" % (
            code, text, content_type, len(body))
        for h in extra:
            head += h + "\r\n"
        client.sendall(head.encode() + b"\r\n" + body)

    def forward(self, client, method, path, headers, body, upgrade, limit):
        upstream = self.connect_upstream()
        kept = [h for h in headers if not h.lower().startswith(("host:", "authorization:"))]
        if not upgrade:
            kept = [h for h in kept if not h.lower().startswith("connection:")]
            kept.append("Connection: close")
        head = "%s %s HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n\r\n" % (
            method, path, self.upstream[0], self.upstream[1], "\r\n".join(kept))
        upstream.sendall(head.encode("latin-1") + body)
        done = threading.Event()

        def client_to_upstream():
            try:
                while not done.is_set():
                    chunk = client.recv(65536)
                    if not chunk:
                        break
                    upstream.sendall(chunk)
            except OSError:
                pass
            done.set()

        pump = threading.Thread(target=client_to_upstream, daemon=True)
        pump.start()
        sent = 0
        try:
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                if limit >= 0 and sent + len(chunk) >= limit:
                    client.sendall(chunk[: limit - sent])
                    self.log("cut %s after %d bytes" % (path, limit))
                    break
                client.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        done.set()
        for s in (upstream, client):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        upstream.close()


def status_body(code, reason):
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": "injected by the fault proxy", "reason": reason,
                       "code": code}).encode()


def main():
    args = parse_args()
    workdir = os.path.dirname(os.path.abspath(args.kubeconfig_out))
    crt, key = make_serving_cert(args.cluster_dir, workdir)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(crt, key)
    server_ctx.set_alpn_protocols(["http/1.1"])
    proxy = Proxy(args)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    write_kubeconfig(args.cluster_dir, port, args.kubeconfig_out)
    print(port, flush=True)
    while True:
        raw, _ = listener.accept()

        def accept_tls(raw=raw):
            try:
                raw.settimeout(30)
                tls = server_ctx.wrap_socket(raw, server_side=True)
                tls.settimeout(None)
            except (OSError, ssl.SSLError):
                raw.close()
                return
            proxy.serve(tls)

        threading.Thread(target=accept_tls, daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
