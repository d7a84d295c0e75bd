#!/usr/bin/env python3
"""rossoctl against kubectl on the same cluster in the same run: wall time (median, p95,
min, max), peak RSS and HTTP requests per side; ratios beside the goals of issue 10."""
import argparse, json, os, platform, re, statistics, subprocess, sys, tempfile, time

def measure(argv, env, stdin=None, shell=False):
    """One run: wall seconds and peak RSS (KiB, the process and its waited-for children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, shell=shell, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if stdin:
        proc.stdin.write(stdin.encode()); proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv!r} exited {proc.returncode}: {err.strip()[:300]}")
    return wall, usage.ru_maxrss

def series(name, argv, env, runs, warmup=2, shell=False, before=None):
    for _ in range(warmup):
        if before: before()
        measure(argv, env, shell=shell)
    walls, rss = [], []
    for _ in range(runs):
        if before: before()
        w, r = measure(argv, env, shell=shell)
        walls.append(w); rss.append(r)
    walls.sort()
    p95 = walls[min(len(walls) - 1, int(round(0.95 * (len(walls) - 1))))]
    return {"name": name, "runs": runs, "median_ms": statistics.median(walls) * 1000, "p95_ms": p95 * 1000,
            "min_ms": walls[0] * 1000, "max_ms": walls[-1] * 1000, "peak_rss_kib": max(rss)}

def count_requests(argv, env, shell=False, pattern=r"^(I\d+ .*round_trippers\.go.*\] \"Response\"|(GET|POST|PUT|PATCH|DELETE) https?://\S+ \d{3})"):
    out = subprocess.run(argv, env=env, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return sum(1 for line in out.stderr.splitlines() if re.search(pattern, line))

def kubectl_requests(argv, env, shell=False):
    out = subprocess.run(argv, env=env, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return sum(1 for line in out.stderr.splitlines() if re.search(r'"Response" verb="|\b(GET|POST|PUT|PATCH|DELETE) https://\S+ \d{3} ', line))

class Bench:
    def __init__(self, a):
        self.a = a
        self.env = dict(os.environ, KUBECONFIG=a.kubeconfig, NO_COLOR="1")
        self.results = []
        self.ns = f"bench-{os.getpid()}"
        self.have_sandbox = False
    def r(self, *args): return [self.a.rossoctl, *args]
    def k(self, *args): return [self.a.kubectl, *args]
    def run(self, argv, check=True, **kw):
        return subprocess.run(argv, env=self.env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    def record(self, title, goal, ours, theirs, ok, note="", ours_req=None, theirs_req=None):
        ratio = theirs["median_ms"] / ours["median_ms"] if ours["median_ms"] else 0
        mem = ours["peak_rss_kib"] / theirs["peak_rss_kib"] if theirs["peak_rss_kib"] else 0
        row = {"title": title, "goal": goal, "rossoctl": ours, "kubectl": theirs, "speedup": ratio,
               "memory_ratio": mem, "rossoctl_requests": ours_req, "kubectl_requests": theirs_req,
               "goal_met": ok(ratio, mem, ours_req, ours), "note": note}
        self.results.append(row)
        print(f"{title}: rossoctl {ours['median_ms']:.1f} ms (p95 {ours['p95_ms']:.1f}), kubectl {theirs['median_ms']:.1f} ms "
              f"(p95 {theirs['p95_ms']:.1f}) -> {ratio:.1f}x, memory {mem:.2f}x, requests {ours_req} vs {theirs_req}; "
              f"goal: {goal}: {'met' if row['goal_met'] else 'MISSED'}", flush=True)

    def startup(self):
        n = self.a.runs
        ours = series("rossoctl version --client", self.r("version", "--client"), self.env, n)
        theirs = series("kubectl version --client", self.k("version", "--client"), self.env, n)
        self.record("1. start-up", ">= 20x faster, <= 1/5 peak memory", ours, theirs,
                    lambda s, m, q, o: s >= 20 and m <= 0.2, ours_req=0, theirs_req=0)

    def sandbox(self, name):
        self.run(self.r("agents", "import", "--deployment-type", "sandbox", "from-image", "--name", name,
                        "--containerImage", "busybox", "--envVar", "MCP_URL=http://old:8080/mcp",
                        "--cpu", "100m", "--memory", "64Mi", "-n", self.ns))

    def set_env(self):
        self.sandbox("bench-env")
        self.run(self.r("agents", "wait", "bench-env", "-n", self.ns, "--timeout", "2m"))
        counter = iter(range(10**6))
        ours = series("set-env", self.r("sandbox", "set-env", "bench-env", "MCP_URL=http://x:1/mcp", "-n", self.ns), self.env, self.a.runs,
                      before=lambda: self.run(self.r("sandbox", "set-env", "bench-env", f"MCP_URL=http://y{next(counter)}:1/mcp", "-n", self.ns)))
        pipeline = (f"{self.a.kubectl} get sandbox bench-env -n {self.ns} -o json | jq '(.spec.podTemplate.spec.containers[0].env[] "
                    f"| select(.name==\"MCP_URL\")).value = \"http://z:1/mcp\"' | {self.a.kubectl} apply -f -")
        theirs = series("kubectl get | jq | kubectl apply", pipeline, self.env, self.a.runs, shell=True,
                        before=lambda: self.run(self.r("sandbox", "set-env", "bench-env", f"MCP_URL=http://y{next(counter)}:1/mcp", "-n", self.ns)))
        self.run(self.r("sandbox", "set-env", "bench-env", "MCP_URL=http://q:1/mcp", "-n", self.ns))
        oreq = count_requests(self.r("sandbox", "set-env", "bench-env", "MCP_URL=http://w:1/mcp", "-n", self.ns, "-v", "6"), self.env)
        treq = kubectl_requests(pipeline.replace(" get ", " -v=6 get ").replace(" apply ", " -v=6 apply "), self.env, shell=True)
        self.record("2. change one variable", ">= 10x faster in <= 3 requests", ours, theirs,
                    lambda s, m, q, o: s >= 10 and q is not None and q <= 3, ours_req=oreq, theirs_req=treq)

    def restart(self):
        ours = series("sandbox restart", self.r("sandbox", "restart", "bench-env", "-n", self.ns), self.env, self.a.restart_runs, warmup=1)
        cmd = (f"{self.a.kubectl} delete pod -n {self.ns} -l app.kubernetes.io/name=bench-env --wait=false && sleep 0.3 && "
               f"{self.a.kubectl} wait -n {self.ns} --for=condition=Ready pod -l app.kubernetes.io/name=bench-env --timeout=120s")
        theirs = series("kubectl delete + wait", cmd, self.env, self.a.restart_runs, warmup=1, shell=True)
        self.record("3a. restart one sandbox", "(measured)", ours, theirs, lambda *_: True,
                    ours_req=count_requests(self.r("sandbox", "restart", "bench-env", "-n", self.ns, "-v", "6"), self.env),
                    theirs_req=kubectl_requests(cmd.replace(" delete ", " -v=6 delete ").replace(" wait ", " -v=6 wait "), self.env, shell=True))

    def restart_many(self):
        n = self.a.many
        for i in range(n):
            self.sandbox(f"many-{i}")
        self.run(self.k("wait", "-n", self.ns, "--for=condition=Ready", "sandbox", "-l", "app.kubernetes.io/managed-by=rossoctl", "--timeout=300s"))
        names = [f"many-{i}" for i in range(n)]
        ours = series(f"restart {n}", self.r("sandbox", "restart", *names, "-n", self.ns, "--timeout", "5m"), self.env, 1, warmup=0)
        cmd = (f"{self.a.kubectl} delete pod -n {self.ns} -l 'app.kubernetes.io/name in ({','.join(names)})' --wait=false && sleep 1 && "
               f"{self.a.kubectl} wait -n {self.ns} --for=condition=Ready pod -l 'app.kubernetes.io/name in ({','.join(names)})' --timeout=300s")
        theirs = series(f"kubectl restart {n}", cmd, self.env, 1, warmup=0, shell=True)
        self.record(f"3b. restart {n} sandboxes", ">= 3x faster", ours, theirs, lambda s, m, q, o: s >= 3)

    def list_many(self):
        n = self.a.list_count
        ns = self.ns + "-list"
        self.run(self.k("create", "namespace", ns))
        items = [{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": {"name": f"s{i}", "namespace": ns,
                  "labels": {"app.kubernetes.io/managed-by": "rossoctl"}},
                  "spec": {"operatingMode": "Suspended", "podTemplate": {"spec": {"containers": [{"name": "agent", "image": "busybox"}]}}}}
                 for i in range(n)]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
        self.run(self.k("create", "-f", f.name, "-o", "name"))
        os.unlink(f.name)
        ours = series(f"sandbox list ({n})", self.r("sandbox", "list", "-n", ns), self.env, self.a.list_runs, warmup=1)
        theirs = series(f"kubectl get sandboxes ({n})", self.k("get", "sandboxes", "-n", ns), self.env, self.a.list_runs, warmup=1)
        self.record(f"4. list {n} sandboxes", ">= 2x faster in <= 1/3 memory", ours, theirs, lambda s, m, q, o: s >= 2 and m <= 1 / 3,
                    ours_req=count_requests(self.r("sandbox", "list", "-n", ns, "-v", "6"), self.env),
                    theirs_req=kubectl_requests(self.k("get", "sandboxes", "-n", ns, "-v=6"), self.env))
        self.run(self.k("delete", "namespace", ns, "--wait=false"))

    def project(self):
        walls = []
        for i in range(self.a.project_runs):
            name = f"{self.ns}-p{i}"
            walls.append(measure(self.r("project", "create", name), self.env))
        yaml = self.run(self.r("project", "create", f"{self.ns}-k", "--dry-run=client", "-o", "yaml")).stdout
        theirs_walls = []
        for i in range(self.a.project_runs):
            theirs_walls.append(measure(self.k("apply", "-f", "-"), self.env, stdin=yaml.replace(f"{self.ns}-k", f"{self.ns}-k{i}")))
        def summary(name, w):
            t = sorted(x[0] for x in w)
            return {"name": name, "runs": len(t), "median_ms": statistics.median(t) * 1000, "p95_ms": t[-1] * 1000,
                    "min_ms": t[0] * 1000, "max_ms": t[-1] * 1000, "peak_rss_kib": max(x[1] for x in w)}
        self.record("5. create a project", "(measured)", summary("project create", walls), summary("kubectl apply -f", theirs_walls), lambda *_: True)
        for i in range(self.a.project_runs):
            self.run(self.k("delete", "namespace", f"{self.ns}-p{i}", f"{self.ns}-k{i}", "--wait=false"), check=False)

    def verify(self):
        out = self.run(self.r("sandbox", "verify", "bench-env", "-n", self.ns, "-o", "json", "--egress-target", self.a.outside), check=False)
        try:
            data = json.loads(out.stdout)
        except json.JSONDecodeError:
            data = {}
        self.results.append({"title": "6. sandbox verify (one sandbox, by check)", "goal": "(measured)", "verify": data})
        print("6. verify:", json.dumps(data)[:400], flush=True)

    def verify_all(self):
        """--all over --verify-count sandboxes of their own project; kubectl has no equivalent."""
        n, ns = self.a.verify_count, self.ns + "-verify"
        self.run(self.r("project", "create", ns, "--cpu", "64", "--memory", "64Gi", "--pods", str(n + 10)))
        try:
            for i in range(n):
                self.run(self.r("agents", "import", "--deployment-type", "sandbox", "from-image", "--name", f"v{i}",
                                "--containerImage", "busybox", "--cpu", "100m", "--memory", "64Mi", "-n", ns))
            self.run(self.k("wait", "-n", ns, "--for=condition=Ready", "sandbox", "--all", "--timeout=300s"))
            start = time.perf_counter()
            out = self.run(self.r("sandbox", "verify", "--all", "-n", ns, "-o", "json", "--egress-target", self.a.outside), check=False)
            wall = time.perf_counter() - start
            try:
                reports = json.loads(out.stdout)
                reports = reports if isinstance(reports, list) else reports.get("items", [reports])
            except json.JSONDecodeError:
                reports = []
            passed = sum(1 for r in reports if r.get("result") == "pass")
            row = {"title": f"6b. sandbox verify --all over {n}", "goal": "(measured)", "wall_ms": wall * 1000,
                   "exit": out.returncode, "sandboxes": len(reports), "passed": passed}
            self.results.append(row)
            print("6b.", json.dumps(row), flush=True)
        finally:
            self.run(self.r("project", "delete", ns, "--yes"), check=False)

    def run_code(self):
        cold = series("sandbox run -- true (cold)", self.r("sandbox", "run", "-n", self.ns, "--", "true"), self.env, self.a.run_runs, warmup=1)
        row = {"title": "7. sandbox run -- true", "goal": "warm-pool p50 < 300 ms", "cold": cold}
        pool = self.run(self.r("sandbox", "pool", "-n", self.ns, "--size", "3", "--wait"), check=False)
        if pool.returncode == 0:
            warm = series("sandbox run -- true (warm pool)", self.r("sandbox", "run", "-n", self.ns, "--pool", "--", "true"), self.env, self.a.run_runs, warmup=1)
            row["warm"] = warm
            row["goal_met"] = warm["median_ms"] < 300
        else:
            row["note"] = "warm pool unavailable: " + pool.stderr.strip()[:200]
            row["goal_met"] = False
        self.results.append(row)
        print("7.", json.dumps(row)[:400], flush=True)

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rossoctl", required=True); p.add_argument("--kubectl", required=True)
    p.add_argument("--kubeconfig", required=True); p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 20)))
    p.add_argument("--restart-runs", type=int, default=5); p.add_argument("--many", type=int, default=int(os.environ.get("BENCH_MANY", 100)))
    p.add_argument("--list-count", type=int, default=int(os.environ.get("BENCH_LIST", 5000)))
    p.add_argument("--list-runs", type=int, default=5); p.add_argument("--project-runs", type=int, default=5)
    p.add_argument("--run-runs", type=int, default=int(os.environ.get("BENCH_RUN_RUNS", 20)))
    p.add_argument("--verify-count", type=int, default=int(os.environ.get("BENCH_VERIFY", 50)))
    p.add_argument("--only", default=os.environ.get("BENCH_ONLY", ""))
    a = p.parse_args()
    a.outside = open(os.path.join(os.path.dirname(a.kubeconfig), "outside-url")).read().strip()
    b = Bench(a)
    steps = [("startup", b.startup), ("set-env", b.set_env), ("restart", b.restart), ("restart-many", b.restart_many),
             ("list", b.list_many), ("project", b.project), ("verify", b.verify), ("verify-all", b.verify_all), ("run", b.run_code)]
    wanted = set(filter(None, a.only.split(",")))
    needs_ns = any(n not in ("startup", "list", "project", "verify-all") for n, _ in steps if not wanted or n in wanted)
    if needs_ns:
        # The default quota fits 8 sandboxes; the restart step runs --many of them.
        b.run([a.rossoctl, "project", "create", b.ns, "--cpu", "64", "--memory", "64Gi",
               "--pods", str(a.many + 20)])
    try:
        for name, fn in steps:
            if wanted and name not in wanted:
                continue
            if name in ("restart", "verify") and wanted and "set-env" not in wanted and not b.have_sandbox:
                b.sandbox("bench-env"); b.run(b.r("agents", "wait", "bench-env", "-n", b.ns))
                b.have_sandbox = True
            try:
                fn()
            except Exception as e:  # one failing measurement must not hide the others
                b.results.append({"title": name, "error": str(e)[:400]})
                print(f"{name}: ERROR {e}", file=sys.stderr, flush=True)
    finally:
        if needs_ns:
            b.run([a.rossoctl, "project", "delete", b.ns, "--yes"], check=False)
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
               "kubectl": b.run(b.k("version", "--client", "-o", "json")).stdout.count("gitVersion") and
               json.loads(b.run(b.k("version", "--client", "-o", "json")).stdout)["clientVersion"]["gitVersion"]}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump({"machine": machine, "results": b.results}, f, indent=2)
    write_markdown(a.out, machine, b.results)
    write_svg(a.out, b.results)
    print(f"wrote {a.out}/latest.json, latest.md, ratios.svg")

def write_markdown(out, machine, results):
    lines = [f"Machine: {machine['cpus']} cores, {machine['platform']}; kubectl {machine['kubectl']}.", "",
             "| measurement | rossoctl median (p95) | kubectl median (p95) | speed-up | memory | requests | goal | met |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "rossoctl" in r:
            o, t = r["rossoctl"], r["kubectl"]
            lines.append(f"| {r['title']} | {o['median_ms']:.0f} ms ({o['p95_ms']:.0f}) | {t['median_ms']:.0f} ms ({t['p95_ms']:.0f}) | "
                         f"{r['speedup']:.1f}x | {o['peak_rss_kib']/1024:.1f} / {t['peak_rss_kib']/1024:.1f} MiB | "
                         f"{r.get('rossoctl_requests')} / {r.get('kubectl_requests')} | {r['goal']} | {'yes' if r['goal_met'] else 'no'} |")
        elif "cold" in r:
            warm = r.get("warm")
            lines.append(f"| {r['title']} | cold {r['cold']['median_ms']:.0f} ms ({r['cold']['p95_ms']:.0f}); warm "
                         f"{(str(round(warm['median_ms'])) + ' ms') if warm else 'n/a'} | | | | | {r['goal']} | {'yes' if r.get('goal_met') else 'no'} |")
        elif "wall_ms" in r:
            lines.append(f"| {r['title']} | {r['wall_ms']:.0f} ms, {r['passed']}/{r['sandboxes']} pass (exit {r['exit']}) | | | | | {r['goal']} | |")
        elif "verify" in r and r["verify"].get("checks"):
            by_check = ", ".join(f"{c['id']} {c.get('tookMs', 0):.0f} ms" for c in r["verify"]["checks"])
            lines.append(f"| {r['title']} | {r['verify'].get('tookMs', 0):.0f} ms: {by_check} | | | | | {r['goal']} | |")
        elif "error" in r:
            lines.append(f"| {r['title']} | error: {r['error'][:80]} | | | | | | |")
    with open(os.path.join(out, "latest.md"), "w") as f:
        f.write("\n".join(lines) + "\n")

def write_svg(out, results):
    rows = [(r["title"], r["speedup"]) for r in results if "speedup" in r]
    width, bar = 640, 26
    height = 40 + bar * len(rows)
    top = max([s for _, s in rows] + [1])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             '<text x="10" y="20" font-weight="bold">kubectl time / rossoctl time (higher is better)</text>']
    for i, (title, s) in enumerate(rows):
        y = 32 + i * bar
        w = max(1, int((width - 260) * s / top))
        parts.append(f'<text x="10" y="{y + 15}">{title}</text><rect x="200" y="{y + 3}" width="{w}" height="16" fill="#3b7dd8"/>'
                     f'<text x="{205 + w}" y="{y + 15}">{s:.1f}x</text>')
    parts.append("</svg>")
    with open(os.path.join(out, "ratios.svg"), "w") as f:
        f.write("\n".join(parts))

if __name__ == "__main__":
    main()
