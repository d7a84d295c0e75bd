#!/usr/bin/env python3
"""Issue 17's goals table: rossoctl against a standalone kubectl (or a `get | jq | apply`
pipeline, or the node's own time) on the same cluster in the same run, the two sides
interleaved run by run, as medians, p95, peak RSS, request counts and met / not met."""
import argparse, datetime, json, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

# sandbox run's default image (app/run/run_pod.hpp).
RUN_IMAGE = "docker.io/library/python:3.12-slim"
REQUEST_LINE = re.compile(r'"Response" verb="|\b(GET|POST|PUT|PATCH|DELETE) https?://\S+ \d{3}\b')


def measure(argv, env, shell=False, ok=(0,), stdout=None):
    """One run: wall seconds, peak RSS in KiB (the process and its waited-for children), stderr.
    stdout, when given, is a list that receives what the run printed."""
    # Peak RSS from GNU time: Python's own wait4 would report this interpreter's RSS, which
    # the vforked child carries until exec.
    if shell:
        argv = ["/bin/sh", "-c", argv]
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out, \
            tempfile.NamedTemporaryFile("r") as rss:  # files: -v 6 can fill a pipe
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name, *argv], env=env,
                                stdin=subprocess.DEVNULL,
                                stdout=out if stdout is not None else subprocess.DEVNULL, stderr=err)
        code = proc.wait()
        wall = time.perf_counter() - start
        err.seek(0); out.seek(0)
        text = err.read().decode(errors="replace")
        if stdout is not None:
            stdout.append(out.read().decode(errors="replace"))
        peak = int((rss.read().strip().splitlines() or ["0"])[-1])
    if code not in ok:
        raise RuntimeError(f"{argv!r} exited {code}: {text.strip()[:300]}")
    return wall, peak, text


def stats(walls, rss):
    walls = sorted(walls)
    p95 = walls[min(len(walls) - 1, int(round(0.95 * (len(walls) - 1))))]
    return {"runs": len(walls), "median_ms": statistics.median(walls) * 1000, "p95_ms": p95 * 1000,
            "min_ms": walls[0] * 1000, "max_ms": walls[-1] * 1000, "peak_rss_kib": max(rss)}


def paired(env, runs, ours, theirs=None, warmup=1, before=None):
    """Runs the two sides alternately (ours, theirs, ours, ...) so load on the shared machine
    falls on both; each side is (argv, shell). Returns (ours stats, theirs stats or None)."""
    sides = [ours] + ([theirs] if theirs else [])
    results = [([], []) for _ in sides]
    for i in range(warmup + runs):
        for side, (walls, rss) in zip(sides, results):
            if before:
                before()
            w, r, _ = measure(side[0], env, shell=side[1])
            if i >= warmup:
                walls.append(w); rss.append(r)
    out = [stats(*r) for r in results]
    return out[0], (out[1] if theirs else None)


def requests_of(argv, env, shell=False, ok=(0,)):
    return sum(1 for line in measure(argv, env, shell=shell, ok=ok)[2].splitlines() if REQUEST_LINE.search(line))


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


class Bench:
    def __init__(self, a):
        self.a = a
        self.env = dict(os.environ, KUBECONFIG=a.kubeconfig, NO_COLOR="1")
        self.rows = []
        self.ns = f"bench-{os.getpid()}"
        self.tmp = tempfile.mkdtemp(prefix="rossoctl-bench-")
        self.have_sandbox = False

    def r(self, *args): return [self.a.rossoctl, *args]
    def k(self, *args): return [self.a.kubectl, *args]

    def run(self, argv, check=True, **kw):
        return subprocess.run(argv, env=self.env, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, **kw)

    def record(self, key, title, goal, ours, met, theirs=None, versus="", ours_req=None, theirs_req=None,
               note=""):
        row = {"key": key, "title": title, "goal": goal, "rossoctl": ours, "versus": versus, "other": theirs,
               "ratio": theirs["median_ms"] / ours["median_ms"] if theirs else None,
               "memory_ratio": ours["peak_rss_kib"] / theirs["peak_rss_kib"] if theirs and theirs.get("peak_rss_kib") else None,
               "rossoctl_requests": ours_req, "other_requests": theirs_req, "note": note}
        row["met"] = bool(met(row))
        self.rows.append(row)
        print(markdown_row(row), flush=True)

    def sandbox(self, name, ns=None):
        self.run(self.r("agents", "import", "--deployment-type", "sandbox", "from-image", "--name", name,
                        "--containerImage", "busybox", "--envVar", "MCP_URL=http://old:8080/mcp",
                        "--cpu", "100m", "--memory", "64Mi", "-n", ns or self.ns))

    def ensure_sandbox(self):
        if not self.have_sandbox:
            self.sandbox("bench-env")
            self.run(self.r("agents", "wait", "bench-env", "-n", self.ns, "--timeout", "2m"))
            self.have_sandbox = True

    def startup(self):
        stripped = os.path.join(self.tmp, "rossoctl")
        subprocess.run(["strip", "-o", stripped, self.a.rossoctl], check=True)
        ours, theirs = paired(self.env, self.a.runs, ([stripped, "version", "--client"], False),
                              (self.k("version", "--client"), False), warmup=3)
        self.record("startup", "start-up `version --client`, stripped", ">= 10x kubectl, <= 1/4 memory", ours,
                    lambda row: row["ratio"] >= 10 and row["memory_ratio"] <= 0.25, theirs, "kubectl version --client",
                    0, 0, note=f"stripped binary {os.path.getsize(stripped) // 1024} KiB")

    def set_env(self):
        self.ensure_sandbox()
        counter = iter(range(10**6))
        # Each run changes the value from a fresh one, so every run writes.
        reset = lambda: self.run(self.r("sandbox", "set-env", "bench-env", f"MCP_URL=http://y{next(counter)}:1/mcp", "-n", self.ns))
        pipeline = (f"{self.a.kubectl} get sandbox bench-env -n {self.ns} -o json | jq '(.spec.podTemplate.spec.containers[0].env[] "
                    f"| select(.name==\"MCP_URL\")).value = \"http://z:1/mcp\"' | {self.a.kubectl} apply -f -")
        ours, theirs = paired(self.env, self.a.runs,
                              (self.r("sandbox", "set-env", "bench-env", "MCP_URL=http://x:1/mcp", "-n", self.ns), False),
                              (pipeline, True), before=reset)
        reset()
        oreq = requests_of(self.r("sandbox", "set-env", "bench-env", "MCP_URL=http://w:1/mcp", "-n", self.ns, "-v", "6"), self.env)
        reset()
        treq = requests_of(pipeline.replace(" get ", " -v=6 get ").replace(" apply ", " -v=6 apply "), self.env, shell=True)
        self.record("set-env", "set-env one variable", ">= 10x the pipeline, 2 requests", ours,
                    lambda row: row["ratio"] >= 10 and oreq == 2, theirs, "kubectl get | jq | kubectl apply", oreq, treq)

    def list_many(self):
        n, ns = self.a.list_count, self.ns + "-list"
        self.run(self.k("create", "namespace", ns))
        try:
            items = [{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
                      "metadata": {"name": f"s{i}", "namespace": ns, "labels": {"app.kubernetes.io/managed-by": "rossoctl"}},
                      "spec": {"operatingMode": "Suspended",
                               "podTemplate": {"spec": {"containers": [{"name": "agent", "image": "busybox"}]}}}}
                     for i in range(n)]
            path = os.path.join(self.tmp, "sandboxes.json")
            with open(path, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
            self.run(self.k("create", "-f", path, "-o", "name"))
            ours, theirs = paired(self.env, self.a.list_runs, (self.r("sandbox", "list", "-n", ns), False),
                                  (self.k("get", "sandboxes", "-n", ns), False))
            self.record("list", f"list {n} sandboxes", ">= 2.5x kubectl, <= 1/5 of its memory", ours,
                        lambda row: row["ratio"] >= 2.5 and row["memory_ratio"] <= 0.2, theirs, "kubectl get sandboxes",
                        requests_of(self.r("sandbox", "list", "-n", ns, "-v", "6"), self.env),
                        requests_of(self.k("get", "sandboxes", "-n", ns, "-v=6"), self.env))
        finally:
            self.run(self.k("delete", "namespace", ns, "--wait=false"), check=False)

    def run_code(self):
        self.ensure_sandbox()
        pool = self.run(self.r("sandbox", "pool", "-n", self.ns, "--size", "3", "--wait"), check=False)
        if pool.returncode != 0:
            raise RuntimeError("warm pool unavailable: " + pool.stderr.strip()[:200])
        # Warm beside its floor (issue 31): one bare exec into a running sandbox, in the same
        # run; before each pair (untimed) the pool is back to its size, so each warm run finds a
        # spare (a claim on an empty pool is a cold start, which the cold row measures).
        warm_argv = self.r("sandbox", "run", "-n", self.ns, "--pool", "--", "true")
        refill = lambda: self.run(self.r("sandbox", "pool", "-n", self.ns, "--size", "3", "--wait"), check=False)
        # Cold beside what a user runs instead: `kubectl run --rm -i` with the run's image and
        # limits (hardened only as far as the project's Pod Security level requires).
        overrides = json.dumps({"spec": {"containers": [{
            "name": "k", "image": RUN_IMAGE, "command": ["true"], "stdin": True,
            "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "500m", "memory": "512Mi"}},
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}}]}})
        kubectl_run = (f"{self.a.kubectl} run kr-$(date +%s%N) -n {self.ns} --rm -i -q --restart=Never "
                       f"--image={RUN_IMAGE} --overrides='{overrides}' </dev/null")
        cold, kubectl = paired(self.env, self.a.run_runs,
                               (self.r("sandbox", "run", "-n", self.ns, "--", "true"), False), (kubectl_run, True))
        warm, bare = paired(self.env, self.a.run_runs, (warm_argv, False),
                            (self.r("sandbox", "exec", "bench-env", "-n", self.ns, "--", "true"), False),
                            before=refill)
        cold_req = requests_of(self.r("sandbox", "run", "-n", self.ns, "-v", "6", "--", "true"), self.env)
        # The claim's DELETE is sent by a child process after the exit, unseen in this count.
        warm_req = requests_of(self.r("sandbox", "run", "-n", self.ns, "--pool", "-v", "6", "--", "true"), self.env)
        self.record("run-warm", "`sandbox run -- true`, warm (pool)", "median <= 150 ms and <= 2x one bare exec",
                    warm, lambda row: row["rossoctl"]["median_ms"] <= 150 and row["ratio"] >= 0.5, bare,
                    "`sandbox exec S -- true` into a running sandbox", ours_req=warm_req)
        self.record("run-cold", "`sandbox run -- true`, cold", ">= 1.5x `kubectl run --rm -i`", cold,
                    lambda row: row["ratio"] >= 1.5, kubectl,
                    "`kubectl run --rm -i --restart=Never`, same image and limits", ours_req=cold_req)
        self.run(self.r("sandbox", "pool", "-n", self.ns, "--size", "0"), check=False)

    def verify(self):
        self.ensure_sandbox()
        argv = self.r("sandbox", "verify", "bench-env", "-n", self.ns, "-o", "json", "--egress-target", self.a.outside)
        walls, rss, checks, results = [], [], {}, []
        for _ in range(self.a.verify_runs):
            out = []
            w, r, _ = measure(argv, self.env, ok=(0, 3), stdout=out)  # 3: a boundary not proven
            walls.append(w); rss.append(r)
            try:
                report = json.loads(out[0])
                results.append(report.get("result", "?"))
                for c in report.get("checks", []):
                    checks.setdefault(c["id"], []).append(c.get("tookMs", 0))
            except json.JSONDecodeError:
                pass
        by_check = ", ".join(f"{k} {statistics.median(v):.0f} ms" for k, v in checks.items())
        by_check += "; results: " + ", ".join(results)
        self.record("verify", "verify one hardened sandbox", "<= 1.5 s", stats(walls, rss),
                    lambda row: row["rossoctl"]["median_ms"] <= 1500,
                    ours_req=requests_of([*argv, "-v", "6"], self.env, ok=(0, 3)), note="by check (median): " + by_check)

    def restart_many(self):
        n = self.a.many
        names = [f"many-{i}" for i in range(n)]
        for name in names:
            self.sandbox(name)
        self.run(self.k("wait", "-n", self.ns, "--for=condition=Ready", "sandbox", *names, "--timeout=300s"))
        started = time.time()
        wall, rss, err = measure(self.r("sandbox", "restart", *names, "-n", self.ns, "--timeout", "5m", "-v", "6"), self.env)
        requests = sum(1 for line in err.splitlines() if REQUEST_LINE.search(line))
        # The node's own time: first replacement pod created -> last one Ready, as the apiserver
        # stamped them (1 s resolution).
        pods = json.loads(self.run(self.k("get", "pods", "-n", self.ns, "-o", "json")).stdout)["items"]
        created, ready = [], []
        for pod in pods:
            if pod["metadata"]["name"] not in names:
                continue
            born = parse_time(pod["metadata"]["creationTimestamp"])
            if born < int(started):
                continue
            created.append(born)
            ready += [parse_time(c["lastTransitionTime"]) for c in pod.get("status", {}).get("conditions", [])
                      if c["type"] == "Ready" and c["status"] == "True"]
        node = {"runs": 1, "median_ms": (max(ready) - min(created)) * 1000 if ready and created else float("nan"),
                "peak_rss_kib": None}
        node["p95_ms"] = node["median_ms"]
        ours = {"runs": 1, "median_ms": wall * 1000, "p95_ms": wall * 1000, "peak_rss_kib": rss}
        self.record("restart", f"restart {n} sandboxes", "wall <= 1.1x the node's time, <= 3 requests per sandbox",
                    ours, lambda row: row["rossoctl"]["median_ms"] <= 1.1 * row["other"]["median_ms"] and requests <= 3 * n,
                    node, f"node: first new pod created -> last Ready ({len(created)} pods)",
                    f"{requests} ({requests / n:.1f}/sandbox)", None)

    def verify_many(self):
        """verify over 50 sandboxes in one run, as `--all` does (the restart row's, made here
        when that row did not run)."""
        n = min(50, self.a.many)
        names = [f"many-{i}" for i in range(n)]
        have = {s["metadata"]["name"] for s in json.loads(self.run(self.k("get", "sandboxes", "-n", self.ns, "-o",
                                                                         "json")).stdout)["items"]}
        for name in names:
            if name not in have:
                self.sandbox(name)
        self.run(self.k("wait", "-n", self.ns, "--for=condition=Ready", "sandbox", *names, "--timeout=300s"))
        argv = self.r("sandbox", "verify", *names, "-n", self.ns, "-o", "json", "--egress-target", self.a.outside)
        out = []
        wall, rss, _ = measure(argv, self.env, ok=(0, 3), stdout=out)
        try:
            results = [item.get("result", "?") for item in json.loads(out[0]).get("items", [])]
        except (json.JSONDecodeError, AttributeError):
            results = []
        ours = {"runs": 1, "median_ms": wall * 1000, "p95_ms": wall * 1000, "peak_rss_kib": rss}
        self.record("verify-many", f"verify {n} sandboxes in one run", "<= 15 s", ours,
                    lambda row: row["rossoctl"]["median_ms"] <= 15_000,
                    note="results: " + ", ".join(f"{k} {results.count(k)}" for k in sorted(set(results))))

    def build(self):
        """Issue 32's build rows, ccache off, 2 jobs: every target from clean, the rossoctl binary
        alone from clean, and one touched source of src/app rebuilt into the tool and unit tests."""
        env = dict(os.environ, CCACHE_DISABLE="1")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []

        def configure(name):
            build = os.path.join(self.tmp, name)
            subprocess.run(["cmake", "-S", self.a.source, "-B", build, *generator,
                            "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], env=env, check=True, stdout=subprocess.DEVNULL)
            return build

        def timed_build(build, *targets):
            before = os.times()
            start = time.perf_counter()
            command = ["cmake", "--build", build, "-j", "2"] + (["--target", *targets] if targets else [])
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
            after = os.times()
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            return time.perf_counter() - start, cpu

        def row(wall):
            return {"runs": 1, "median_ms": wall * 1000, "p95_ms": wall * 1000, "peak_rss_kib": None}

        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        build = configure("build-all")
        wall, cpu = timed_build(build)
        self.record("build", "clean build of the C++ code, 2 jobs", "<= 5 min", row(wall),
                    lambda r: r["rossoctl"]["median_ms"] <= 300_000,
                    note=f"every target, ccache off, {cpu:.0f} s of CPU; load at start {load}")
        # One source of the app layer touched: its unity batch and the links that need it.
        touched = os.path.join(self.a.source, "src", "app", "agents.cpp")
        os.utime(touched)
        wall, cpu = timed_build(build, "rossoctl", "unit_tests")
        self.record("build-touch", "touch src/app/agents.cpp, rebuild rossoctl + unit tests", "<= 20 s", row(wall),
                    lambda r: r["rossoctl"]["median_ms"] <= 20_000, note=f"{cpu:.0f} s of CPU")
        shutil.rmtree(build, ignore_errors=True)
        build = configure("build-tool")
        wall, cpu = timed_build(build, "rossoctl")
        self.record("build-tool", "clean build of the rossoctl binary alone, 2 jobs", "<= 2 min", row(wall),
                    lambda r: r["rossoctl"]["median_ms"] <= 120_000, note=f"ccache off, {cpu:.0f} s of CPU")
        shutil.rmtree(build, ignore_errors=True)


def fmt_ms(ms):
    return f"{ms / 1000:.2f} s" if ms >= 10_000 else f"{ms:.0f} ms"


def markdown_row(r):
    if "error" in r:
        return f"| {r['title']} | error: {r['error'][:100]} | | | | | | |"
    o, t = r["rossoctl"], r.get("other")
    ours = f"{fmt_ms(o['median_ms'])} ({fmt_ms(o['p95_ms'])})"
    theirs = f"{r['versus']}: {fmt_ms(t['median_ms'])} ({fmt_ms(t['p95_ms'])})" if t else "—"
    ratio = f"{r['ratio']:.1f}x" if r.get("ratio") else "—"
    mem = (f"{o['peak_rss_kib'] / 1024:.1f}" if o.get("peak_rss_kib") else "—") + \
          (f" / {t['peak_rss_kib'] / 1024:.1f} MiB ({r['memory_ratio']:.2f}x)" if t and t.get("peak_rss_kib") else " MiB" if o.get("peak_rss_kib") else "")
    req = "—" if r["rossoctl_requests"] is None else str(r["rossoctl_requests"])
    if r.get("other_requests") is not None:
        req += f" / {r['other_requests']}"
    note = f"; {r['note']}" if r.get("note") else ""
    cells = [r["title"], ours, theirs, ratio, mem, req, r["goal"], ("met" if r["met"] else "**not met**") + note]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def write_markdown(path, machine, rows):
    lines = [f"Machine: {machine['machine']}; load average at start {machine['load']}; kubectl {machine['kubectl']} "
             f"(standalone, built from the cluster's Go module); {machine['date']}.", "",
             "| measurement | rossoctl median (p95) | compared with: median (p95) | ratio | peak RSS | requests | goal | |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [markdown_row(r) for r in rows]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rossoctl", required=True); p.add_argument("--kubectl", required=True)
    p.add_argument("--kubeconfig", required=True); p.add_argument("--out", required=True)
    p.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--build-dir", default="")
    p.add_argument("--quick", action="store_true", help="fewer runs, 20 sandboxes to restart, 1,000 to list")
    p.add_argument("--build-row", action="store_true", default=os.environ.get("BUILD_ROW") == "1",
                   help="also time a clean build (minutes)")
    p.add_argument("--only", default=os.environ.get("BENCH_ONLY", ""),
                   help="comma-separated rows: startup,set-env,list,run,verify,restart,verify-many,build")
    p.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 20)))
    p.add_argument("--many", type=int, default=int(os.environ.get("BENCH_MANY", 100)))
    p.add_argument("--list-count", type=int, default=int(os.environ.get("BENCH_LIST", 5000)))
    p.add_argument("--list-runs", type=int, default=5)
    p.add_argument("--run-runs", type=int, default=int(os.environ.get("BENCH_RUN_RUNS", 20)))
    p.add_argument("--verify-runs", type=int, default=3)
    a = p.parse_args()
    if a.quick:
        a.runs, a.many, a.list_count, a.list_runs, a.run_runs, a.verify_runs = 10, 20, 1000, 3, 5, 1
    a.outside = open(os.path.join(os.path.dirname(a.kubeconfig), "outside-url")).read().strip()
    b = Bench(a)
    steps = [("startup", b.startup), ("set-env", b.set_env), ("list", b.list_many), ("run", b.run_code),
             ("verify", b.verify), ("restart", b.restart_many), ("verify-many", b.verify_many), ("build", b.build)]
    wanted = set(filter(None, a.only.split(","))) or {n for n, _ in steps if n != "build" or a.build_row}
    machine = {"machine": f"{os.cpu_count()} cores, {platform.platform()}",
               "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "kubectl": json.loads(b.run(b.k("version", "--client", "-o", "json")).stdout)["clientVersion"]["gitVersion"]}
    needs_ns = bool(wanted & {"set-env", "run", "verify", "restart", "verify-many"})
    if needs_ns:  # the default quota fits 8 sandboxes; the restart row runs --many of them
        b.run(b.r("project", "create", b.ns, "--cpu", "64", "--memory", "64Gi", "--pods", str(a.many + 20)))
    print("| measurement | rossoctl median (p95) | compared with: median (p95) | ratio | peak RSS | requests | goal | |",
          flush=True)
    try:
        for name, fn in steps:
            if name not in wanted:
                continue
            try:
                fn()
            except Exception as e:  # one failing row must not hide the others
                b.rows.append({"key": name, "title": name, "error": str(e)[:400]})
                print(f"{name}: ERROR {e}", file=sys.stderr, flush=True)
    finally:
        if needs_ns:
            b.run(b.r("project", "delete", b.ns, "--yes"), check=False)
        shutil.rmtree(b.tmp, ignore_errors=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump({"machine": machine, "rows": b.rows}, f, indent=2)
    write_markdown(os.path.join(a.out, "latest.md"), machine, b.rows)
    print(f"\n{machine['machine']}; load {machine['load']}; wrote {a.out}/latest.json and latest.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
