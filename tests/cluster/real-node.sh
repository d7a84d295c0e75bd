# shellcheck shell=bash
# real-node.sh: the local cluster's node, sourced by local-cluster. Upstream kubelet and
# kube-proxy (k8s.io/kubernetes at go.mod's version), Debian's containerd, runc and CNI plugins,
# a distribution registry on the node's loopback and kube-router's NetworkPolicy controller.
# Everything but one veth runs in a private mount and network namespace (README "The node"), so
# nothing collides with another
# cluster's node and `down` leaves nothing behind.

REAL_NODE_APT_PACKAGES=(containerd runc runsc containernetworking-plugins iptables ipset conntrack
  socat umoci skopeo jq openssl gcc libc6-dev iproute2 util-linux apache2-utils)
REGISTRY_MODULE=github.com/distribution/distribution/v3/cmd/registry@v3.1.2
KUBE_ROUTER_MODULE=github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@v2.1.0
# Fixed inside the node's own network namespace, so they collide with nothing.
REAL_REGISTRY=127.0.0.1:5000
# The same registry with basic auth (htpasswd), mirrored for PRIVATE_HOST only: what
# `agents import --imagePullSecret` pulls from. Its user and password are in
# DIR/node-real/private-registry.json (mode 600), made per state dir.
PRIVATE_REGISTRY=127.0.0.1:5001
PRIVATE_HOST=registry.rossoctl.test
PRIVATE_IMAGES=("docker.io/library/busybox:1.36=$PRIVATE_HOST/private/busybox:1.36")
REAL_POD_CIDR=10.250.0.0/24
# Logical CPUs the node advertises (node_ns_script says why it is not the machine's count).
REAL_NODE_CPUS=${LOCAL_CLUSTER_NODE_CPUS:-32}
REAL_BRIDGE=lc-cni0
PAUSE_IMAGE=registry.k8s.io/pause:3.10.2
COREDNS_IMAGE=localcluster/coredns:v1.15.0
# Registry hosts mirrored to the node's registry; containerd contacts no other.
MIRRORED_HOSTS=(docker.io registry-1.docker.io gcr.io ghcr.io quay.io registry.k8s.io k8s.gcr.io
  mcr.microsoft.com public.ecr.aws)

REAL_NODE_COMPONENTS=(node-ns apiserver-link apiserver-link-node registry registry-private outside containerd
  kubelet kube-proxy kube-router provisioner)
# The outside world: a network namespace of its own behind the node's, with an HTTP server of
# its own (`localcluster outside`) on two addresses; pods reach it through the node.
OUTSIDE_NET=10.251.0.0/24
OUTSIDE_GW=10.251.0.1
OUTSIDE_IP=10.251.0.10
OUTSIDE_OTHER_IP=10.251.0.11
OUTSIDE_NAME=outside.rossoctl.test

# Per state dir: a hash names the host side of the veth and picks its /30 in 10.247.0.0/16.
real_node_ids() {
  local h; h=$(sha256sum <<<"$STATE" | cut -c1-8)
  NODE_DIR=$STATE/node-real
  HOST_VETH=lcn${h:0:10}
  local n=$((16#${h:0:4} % 16384))
  VETH_HOST_IP=10.247.$((n / 64)).$(((n % 64) * 4 + 1))
  VETH_NODE_IP=10.247.$((n / 64)).$(((n % 64) * 4 + 2))
  CGROUP_ROOT=/localcluster-$h
  APISERVER_LINK_SOCK=$NODE_DIR/apiserver.sock
}

ensure_real_node_packages() {
  local missing=() p
  for p in "${REAL_NODE_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return
  [[ $EUID -eq 0 ]] || die "the real node needs ${missing[*]} (apt-get install)"
  log "installing ${missing[*]} for the real node (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  } || die "could not install ${missing[*]}"
  # Debian's package may start a host-wide containerd where an init system runs; the node
  # never uses it, so it must not be what answers on /run/containerd in a test.
  pgrep -x containerd >/dev/null && log "note: a host containerd runs; the real node uses its own"
  return 0
}

# build_real_node: kubelet and kube-proxy from this module (their packages are tools in
# go.mod), registry and kube-router from their own released modules; cached by version.
build_real_node() {
  find_go
  mkdir -p "$BIN"
  exec 9>"$BIN/.build-real.lock"
  flock 9
  local ldflags stamp t0=$SECONDS; ldflags=$(version_ldflags)
  stamp=$( (echo "$ldflags"; cat "$HERE/go.mod" "$HERE/go.sum") | sha256sum | cut -c1-32)
  if [[ ! -x $BIN/kubelet || ! -x $BIN/kube-proxy || $(cat "$BIN/.build-real-hash" 2>/dev/null) != "$stamp" ]]; then
    log "building bin/kubelet and bin/kube-proxy (Kubernetes $K8S_VERSION)"
    (cd "$HERE" && nice -n 10 go build -ldflags "$ldflags" -o "$BIN/kubelet.new" k8s.io/kubernetes/cmd/kubelet &&
      nice -n 10 go build -ldflags "$ldflags" -o "$BIN/kube-proxy.new" k8s.io/kubernetes/cmd/kube-proxy) ||
      die "go build of kubelet/kube-proxy failed"
    mv -f "$BIN/kubelet.new" "$BIN/kubelet"; mv -f "$BIN/kube-proxy.new" "$BIN/kube-proxy"
    echo "$stamp" >"$BIN/.build-real-hash"
    log "built kubelet and kube-proxy in $((SECONDS - t0))s"
  fi
  # CoreDNS with the plugins the cluster DNS uses (tests/cluster/coredns, its own go.mod).
  stamp=$(cat "$HERE/coredns/go.mod" "$HERE/coredns/go.sum" "$HERE/coredns/main.go" | sha256sum | cut -c1-32)
  if [[ ! -x $BIN/coredns || $(cat "$BIN/.coredns-hash" 2>/dev/null) != "$stamp" ]]; then
    log "building bin/coredns (CoreDNS $(awk '$1=="github.com/coredns/coredns" {print $2; exit} $2=="github.com/coredns/coredns" {print $3; exit}' "$HERE/coredns/go.mod"))"
    t0=$SECONDS
    (cd "$HERE/coredns" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags "-s -w" -o "$BIN/coredns.new" .) ||
      die "go build of coredns failed"
    mv -f "$BIN/coredns.new" "$BIN/coredns"; echo "$stamp" >"$BIN/.coredns-hash"
    log "built coredns in $((SECONDS - t0))s"
  fi
  local m name
  for m in "$REGISTRY_MODULE" "$KUBE_ROUTER_MODULE"; do
    name=$(basename "${m%@*}")
    [[ -x $BIN/$name && $(cat "$BIN/.$name-version" 2>/dev/null) == "$m" ]] && continue
    log "building bin/$name ($m)"
    t0=$SECONDS
    # Outside this module: each builds with its own released go.mod.
    (cd / && GOFLAGS= GOBIN="$BIN/.gobin" nice -n 10 go install "$m") || die "go install $m failed"
    mv -f "$BIN/.gobin/$name" "$BIN/$name"
    echo "$m" >"$BIN/.$name-version"
    log "built $name in $((SECONDS - t0))s"
  done
  exec 9>&-
}

# --- configuration -------------------------------------------------------------
# The kubelet serving certificate, signed by the cluster CA for the node's veth address (the
# apiserver verifies it with --kubelet-certificate-authority).
real_node_serving_cert() {
  local d=$NODE_DIR/pki
  [[ -f $d/kubelet.crt && -f $d/kubelet.key ]] && return 0
  mkdir -p "$d"
  openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$d/kubelet.key"
  openssl req -new -key "$d/kubelet.key" -subj "/O=system:nodes/CN=system:node:local-node" -out "$d/kubelet.csr" 2>/dev/null
  printf 'subjectAltName=DNS:local-node,IP:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n' \
    "$VETH_NODE_IP" >"$d/kubelet.ext"
  openssl x509 -req -in "$d/kubelet.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$d/kubelet.ext" -out "$d/kubelet.crt" 2>/dev/null || die "kubelet certificate failed"
  chmod 600 "$d/kubelet.key"
}

write_real_node_config() {
  mkdir -p "$NODE_DIR"/{containerd,cni,certs.d,kubelet,pod-logs,registry,cni-state}
  local h
  install -m 755 "$HERE/real-node/runsc" "$NODE_DIR/runsc"
  install -m 755 "$HERE/real-node/tcp-buffer-limit" "$NODE_DIR/tcp-buffer-limit"
  # runc's containers start from containerd's own default spec, plus the hook that bounds their
  # TCP buffers (real-node/tcp-buffer-limit says why).
  ctr oci spec | jq --arg hook "$NODE_DIR/tcp-buffer-limit" \
    '.hooks.createRuntime = [{path: $hook, args: ["tcp-buffer-limit"], timeout: 10,
      env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}]' \
    >"$NODE_DIR/runc-base-spec.json" || die "cannot write runc's base spec"
  cat >"$NODE_DIR/containerd.toml" <<EOF
# containerd of the local cluster's real node (written by local-cluster up). It runs in the
# node's private mount namespace, whose tmpfs /run holds the fixed host paths it also uses.
version = 2
root = "$NODE_DIR/containerd/root"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$NODE_DIR/containerd.sock"
[ttrpc]
  address = "$NODE_DIR/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The process lacks CAP_SYS_RESOURCE: containers may not get a lower oom_score_adj than it.
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      base_runtime_spec = "$NODE_DIR/runc-base-spec.json"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
    # gVisor behind containerd's runc shim: real-node/runsc says how and why.
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        BinaryName = "$NODE_DIR/runsc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$NODE_DIR/certs.d"
EOF
  # Every registry host resolves to the node's registry, under a path of its own, and to nothing
  # else: an image the store lacks is the registry's 404.
  for h in "${MIRRORED_HOSTS[@]}" _default; do
    mkdir -p "$NODE_DIR/certs.d/$h"
    local path=$h; [[ $h == registry-1.docker.io ]] && path=docker.io
    [[ $h == _default ]] && path=unknown
    # override_path: the path is the whole API prefix (containerd would append /v2 again). A
    # file with only the top-level server falls back to the upstream host (measured: containerd
    # 1.6.20 then looked up registry-1.docker.io); with a [host] entry it does not.
    cat >"$NODE_DIR/certs.d/$h/hosts.toml" <<EOF
server = "http://$REAL_REGISTRY/v2/$path"
override_path = true
[host."http://$REAL_REGISTRY/v2/$path"]
  capabilities = ["pull", "resolve"]
  override_path = true
EOF
  done
  mkdir -p "$NODE_DIR/certs.d/$PRIVATE_HOST"
  cat >"$NODE_DIR/certs.d/$PRIVATE_HOST/hosts.toml" <<EOF
server = "http://$PRIVATE_REGISTRY/v2/$PRIVATE_HOST"
override_path = true
[host."http://$PRIVATE_REGISTRY/v2/$PRIVATE_HOST"]
  capabilities = ["pull", "resolve"]
  override_path = true
EOF
  write_private_registry_config
  cat >"$NODE_DIR/cni/10-localcluster.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "localcluster",
  "plugins": [
    {"type": "bridge", "bridge": "$REAL_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$NODE_DIR/cni-state",
              "ranges": [[{"subnet": "$REAL_POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "tuning", "sysctl": {"net.ipv6.conf.all.disable_ipv6": "1"}}
  ]
}
EOF
  cat >"$NODE_DIR/registry.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $NODE_DIR/registry
  delete:
    enabled: true
http:
  addr: $REAL_REGISTRY
EOF
  # No upstream DNS: pods with dnsPolicy Default resolve nothing outside the cluster.
  echo "# no upstream resolver: nothing outside this machine is reachable" >"$NODE_DIR/resolv.conf"
  real_node_serving_cert
  cat >"$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroups are v1 (hybrid) on this machine kind.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
# No kubepods/QoS cgroups: the kubelet would write the node's advertised CPUs (REAL_NODE_CPUS)
# into kubepods' cpuset.cpus, which the kernel refuses past the machine's own. Each container's
# cgroup (runc) still carries its limits.
cgroupsPerQOS: false
enforceNodeAllocatable: []
containerRuntimeEndpoint: unix://$NODE_DIR/containerd.sock
address: $VETH_NODE_IP
port: 10250
readOnlyPort: 0
tlsCertFile: $NODE_DIR/pki/kubelet.crt
tlsPrivateKeyFile: $NODE_DIR/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
resolvConf: $NODE_DIR/resolv.conf
podLogsDir: $NODE_DIR/pod-logs
failSwapOn: false
protectKernelDefaults: true
# A container whose spec names no seccomp profile gets the runtime's default, not Unconfined:
# verify reads this (configz) and counts such a neighbour as host access otherwise (attack 65 N3).
seccompDefault: true
# kube-router here filters IPv4 only: pods get no IPv6 (the CNI's tuning step), and a test pod
# may turn it back on to show verify that IPv6 is left unproven (attack 54 E1).
allowedUnsafeSysctls: ["net.ipv6.conf.all.disable_ipv6"]
serializeImagePulls: false
# A test machine's disk and memory are shared: evict nothing for pressure.
evictionHard: {memory.available: "0%", nodefs.available: "0%", imagefs.available: "0%", nodefs.inodesFree: "0%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
syncFrequency: 10s
fileCheckFrequency: 10s
EOF
  cat >"$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $STATE/kubeconfig
hostnameOverride: local-node
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
mode: iptables
clusterCIDR: $REAL_POD_CIDR
# The conntrack table size is host-wide: leave it as it is.
conntrack:
  maxPerCore: 0
EOF
}

# The credentialed registry: its own storage, htpasswd auth, a user and password made once.
write_private_registry_config() {
  local creds=$NODE_DIR/private-registry.json user=puller password
  if [[ ! -f $creds ]]; then
    password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
    (umask 077; jq -Rn --arg s "$PRIVATE_HOST" --arg u "$user" '{server: $s, username: $u, password: input}' \
      <<<"$password" >"$creds")
  fi
  password=$(jq -r .password "$creds")
  # htpasswd -i reads the password from stdin, so it is on no command line either.
  (umask 077; htpasswd -Bni "$user" <<<"$password" >"$NODE_DIR/private-registry.htpasswd"
    printf '%s:%s' "$user" "$password" | base64 -w0 |
      jq -Rn --arg r "$PRIVATE_REGISTRY" '{auths: {($r): {auth: input}}}' >"$NODE_DIR/private-registry.auth")
  cat >"$NODE_DIR/registry-private.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $NODE_DIR/registry-private
auth:
  htpasswd:
    realm: localcluster
    path: $NODE_DIR/private-registry.htpasswd
http:
  addr: $PRIVATE_REGISTRY
EOF
}

# --- namespaces ------------------------------------------------------------------
# The script the namespace holder runs first: a private /run and /var (containerd 1.6, runc and
# libcni use fixed paths there), no upstream resolver, and the kernel tunables the kubelet checks
# shown at the values it wants (they are host-wide: it must not write them).
node_ns_script() {
  cat <<EOF
set -e
mount -t tmpfs -o mode=755 localcluster-run /run
mount -t tmpfs -o mode=755 localcluster-var /var
mkdir -p /var/lib/cni /var/log /var/tmp /run/lock
ln -s /run /var/run
chmod 1777 /var/tmp
mount --bind "$NODE_DIR/resolv.conf" /etc/resolv.conf
mkdir -p /run/localcluster-sysctl
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
  kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
  f=/run/localcluster-sysctl/\$(echo "\${kv%%=*}" | tr / _)
  echo "\${kv#*=}" >"\$f"
  mount --bind "\$f" "/proc/sys/\${kv%%=*}"
done
# The node shows the kubelet (cAdvisor reads sysfs) $REAL_NODE_CPUS logical CPUs, whatever the
# machine has: the suite's sandboxes request more than two cores in all, and on a 2-core machine
# the scheduler left them Pending ("Insufficient cpu"). Each container's CFS quota still
# enforces its limit.
fake=/run/localcluster-sysnode/node0
mkdir -p "\$fake"
cat /sys/devices/system/node/node0/meminfo >"\$fake/meminfo"
echo 10 >"\$fake/distance"
for h in /sys/devices/system/node/node0/hugepages/hugepages-*; do
  [ -d "\$h" ] || continue
  mkdir -p "\$fake/hugepages/\${h##*/}"
  cat "\$h/nr_hugepages" >"\$fake/hugepages/\${h##*/}/nr_hugepages"
done
for i in \$(seq 0 $((REAL_NODE_CPUS - 1))); do
  mkdir -p "\$fake/cpu\$i/topology"
  echo "\$i" >"\$fake/cpu\$i/topology/core_id"
  echo 0 >"\$fake/cpu\$i/topology/physical_package_id"
done
mount --bind /run/localcluster-sysnode /sys/devices/system/node
echo "0-$((REAL_NODE_CPUS - 1))" >/run/localcluster-sysctl/cpu_online
mount --bind /run/localcluster-sysctl/cpu_online /sys/devices/system/cpu/online
ip link set lo up
sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
exec -a "localcluster-node-ns $STATE" sleep infinity
EOF
}

node_ns_pid() { pid_of node-ns; }

# in_node_ns CMD...: run CMD in the node's mount and network namespaces.
in_node_ns() {
  local p; p=$(node_ns_pid) || die "the real node's namespace holder is not running"
  nsenter -t "$p" -m -n -- "$@"
}

setup_node_veth() {
  local p; p=$(node_ns_pid) || return 1
  ip link del "$HOST_VETH" 2>/dev/null || true
  ip link add "$HOST_VETH" type veth peer name eth0 netns "$p" || return 1
  ip addr add "$VETH_HOST_IP/30" dev "$HOST_VETH"
  ip link set "$HOST_VETH" up
  nsenter -t "$p" -n -- ip addr add "$VETH_NODE_IP/30" dev eth0
  nsenter -t "$p" -n -- ip link set eth0 up
}

# setup_outside_veth: the outside world's link into the node's network namespace.
setup_outside_veth() {
  local node out; node=$(node_ns_pid) && out=$(pid_of outside) || return 1
  nsenter -t "$out" -n -- ip link show eth0 >/dev/null 2>&1 && return 0
  nsenter -t "$node" -n -- ip link add lc-out0 type veth peer name eth0 netns "$out" &&
    nsenter -t "$node" -n -- ip addr add "$OUTSIDE_GW/24" dev lc-out0 &&
    nsenter -t "$node" -n -- ip link set lc-out0 up &&
    nsenter -t "$out" -n -- ip addr add "$OUTSIDE_IP/24" dev eth0 &&
    nsenter -t "$out" -n -- ip addr add "$OUTSIDE_OTHER_IP/24" dev eth0 &&
    nsenter -t "$out" -n -- ip link set eth0 up &&
    nsenter -t "$out" -n -- ip route add default via "$OUTSIDE_GW"
}

# publish_outside: the URLs tests read (CONTRACT "Network"). The client machine reaches the
# outside world too (verify's positive control connects from there): a route through the node's
# veth (it goes with the veth) and the name in /etc/hosts, marked with the state dir.
publish_outside() {
  ip route replace "$OUTSIDE_NET" via "$VETH_NODE_IP" dev "$HOST_VETH" || return 1
  remove_outside_hosts_entry
  printf '%s %s %s\n' "$OUTSIDE_IP" "$OUTSIDE_NAME" "$(outside_hosts_marker)" >>/etc/hosts
  echo "http://$OUTSIDE_NAME/" >"$STATE/outside-url"
  echo "http://$OUTSIDE_IP/" >"$STATE/outside-url-ip"
}

outside_hosts_marker() { echo "# localcluster-outside $STATE"; }

# Rewritten in place: /etc/hosts is often a bind mount that a rename would not replace.
remove_outside_hosts_entry() {
  local marker kept; marker=$(outside_hosts_marker)
  grep -qF -- "$marker" /etc/hosts 2>/dev/null || return 0
  kept=$(grep -vF -- "$marker" /etc/hosts)
  printf '%s\n' "$kept" >/etc/hosts
}

# --- components ------------------------------------------------------------------
# real_component_exe C: the executable a component's pid must be (pid reuse check).
real_component_exe() {
  case $1 in
    node-ns) command -v sleep ;;
    apiserver-link|apiserver-link-node) command -v socat ;;
    registry|kubelet|kube-proxy|kube-router) echo "$BIN/$1" ;;
    registry-private) echo "$BIN/registry" ;;
    outside) echo "$LC" ;;
    containerd) command -v containerd ;;
    *) echo "$LC" ;;
  esac
}

real_component_args() {
  case $1 in
    node-ns) ARGS=(unshare --mount --net --propagation private -- bash -c "$(node_ns_script)") ;;
    apiserver-link) ARGS=(socat "UNIX-LISTEN:$APISERVER_LINK_SOCK,fork,unlink-early,mode=600"
      "TCP:127.0.0.1:$APISERVER_PORT") ;;
    # The node's processes reach the apiserver at the address their kubeconfigs name; pods at
    # the node's address, the `kubernetes` Service's endpoint (in-cluster config).
    apiserver-link-node) ARGS=(nsenter -t "$(node_ns_pid)" -m -n -- socat
      "TCP-LISTEN:$APISERVER_PORT,reuseaddr,fork" "UNIX-CONNECT:$APISERVER_LINK_SOCK") ;;
    # OTEL_TRACES_EXPORTER: the registry would post traces to localhost:4318 otherwise.
    registry) ARGS=(env OTEL_TRACES_EXPORTER=none nsenter -t "$(node_ns_pid)" -m -n -- "$BIN/registry" serve
      "$NODE_DIR/registry.yml") ;;
    registry-private) ARGS=(env OTEL_TRACES_EXPORTER=none nsenter -t "$(node_ns_pid)" -m -n -- "$BIN/registry"
      serve "$NODE_DIR/registry-private.yml") ;;
    # In a network namespace of its own; its veth into the node comes once it runs.
    outside) ARGS=(unshare --net -- bash -c "ip link set lo up && exec '$LC' outside --listen :80") ;;
    containerd) ARGS=(nsenter -t "$(node_ns_pid)" -m -n -- containerd --config "$NODE_DIR/containerd.toml") ;;
    kubelet) ARGS=(nsenter -t "$(node_ns_pid)" -m -n -- "$BIN/kubelet" --config "$NODE_DIR/kubelet.yaml"
      --kubeconfig "$STATE/kubeconfig-node" --root-dir "$NODE_DIR/kubelet" --cert-dir "$NODE_DIR/pki"
      --hostname-override local-node --node-ip "$VETH_NODE_IP") ;;
    kube-proxy) ARGS=(nsenter -t "$(node_ns_pid)" -m -n -- "$BIN/kube-proxy" --config "$NODE_DIR/kube-proxy.yaml") ;;
    # hostPath volumes under the node's dir, which the kubelet sees at the same path.
    provisioner) ARGS=("$LC" provisioner --kubeconfig "$KUBECONFIG_ADMIN" --dir "$NODE_DIR/pvcs") ;;
    kube-router) ARGS=(nsenter -t "$(node_ns_pid)" -m -n -- "$BIN/kube-router" --kubeconfig "$STATE/kubeconfig"
      --run-firewall=true --run-router=false --run-service-proxy=false --hostname-override=local-node
      --enable-cni=false --health-port=0 --metrics-port=0 --service-cluster-ip-range=10.96.0.0/16) ;;
  esac
}

real_wait_component() {
  case $1 in
    node-ns) wait_until "$TIMEOUT" node-ns "the node's namespaces" test -L "/proc/$(node_ns_pid 2>/dev/null || echo 0)/ns/net" &&
      sleep 0.5 && [[ $(readlink "/proc/$(node_ns_pid)/exe") == "$(command -v sleep)" ]] ;;
    apiserver-link) wait_until "$TIMEOUT" "$1" "$APISERVER_LINK_SOCK" test -S "$APISERVER_LINK_SOCK" ;;
    apiserver-link-node) wait_until "$TIMEOUT" "$1" "the apiserver inside the node" \
      in_node_ns bash -c "exec 3<>/dev/tcp/127.0.0.1/$APISERVER_PORT" ;;
    registry) wait_until "$TIMEOUT" "$1" "the registry on $REAL_REGISTRY" \
      in_node_ns bash -c "exec 3<>/dev/tcp/${REAL_REGISTRY%:*}/${REAL_REGISTRY#*:}" ;;
    registry-private) wait_until "$TIMEOUT" "$1" "the registry on $PRIVATE_REGISTRY" \
      in_node_ns bash -c "exec 3<>/dev/tcp/${PRIVATE_REGISTRY%:*}/${PRIVATE_REGISTRY#*:}" ;;
    containerd) wait_until "$TIMEOUT" "$1" "$NODE_DIR/containerd.sock" test -S "$NODE_DIR/containerd.sock" ;;
    # Its first sync hooks its chains into the node's tables: policies hold from then on.
    kube-router) wait_until "$TIMEOUT" "$1" "kube-router's rules in FORWARD" \
      in_node_ns sh -c 'iptables -S FORWARD | grep -q -- "-j KUBE-ROUTER-FORWARD"' ;;
    outside) setup_outside_veth && wait_until "$TIMEOUT" "$1" "the outside world on $OUTSIDE_IP:80" \
      in_node_ns bash -c "exec 3<>/dev/tcp/$OUTSIDE_IP/80" && publish_outside ;;
    *) sleep 1; running "$1" || { log "$1 exited at start"; show_log "$1"; return 1; } ;;
  esac
}

# push_store_images: the image store's images (and the pause image) into the node's registry.
push_store_images() {
  local t0=$SECONDS
  "$HERE/images/oci" "$IMAGE_STORE" "$STATE/images.json" "$IMAGE_STORE-oci" "$NODE_DIR/oci-index" \
    "$COREDNS_IMAGE=$BIN/coredns" || return 1
  local layout ref
  while IFS='|' read -r layout ref; do
    in_node_ns skopeo copy --quiet --dest-tls-verify=false "oci:$layout:image" "docker://$REAL_REGISTRY/$ref" \
      >>"$STATE/logs/registry-push.log" 2>&1 || { log "pushing $ref failed"; tail -5 "$STATE/logs/registry-push.log" >&2; return 1; }
  done <"$NODE_DIR/oci-index"
  local private from to
  for private in "${PRIVATE_IMAGES[@]}"; do
    from=${private%%=*}; to=${private#*=}
    layout=$(grep -F "|$from" "$NODE_DIR/oci-index" | head -1 | cut -d'|' -f1)
    [[ -n $layout ]] || { log "$from is not in the image store"; return 1; }
    # The credentials come from a file (mode 600), never a command line.
    in_node_ns skopeo copy --quiet --dest-tls-verify=false --dest-authfile "$NODE_DIR/private-registry.auth" \
      "oci:$layout:image" \
      "docker://$PRIVATE_REGISTRY/$to" >>"$STATE/logs/registry-push.log" 2>&1 ||
      { log "pushing $to failed"; tail -5 "$STATE/logs/registry-push.log" >&2; return 1; }
  done
  log "registry: pushed $(wc -l <"$NODE_DIR/oci-index") image(s), ${#PRIVATE_IMAGES[@]} with credentials, in $((SECONDS - t0))s"
}

# The kubelet's cgroupRoot must exist in every v1 hierarchy; a new cpuset has no CPUs until
# it is given its parent's.
ensure_cgroup_root() {
  local h d
  for h in /sys/fs/cgroup/*/; do
    d=${h%/}$CGROUP_ROOT
    [[ -d $d ]] || mkdir "$d" || return 1
    if [[ -f $d/cpuset.cpus && -z $(<"$d/cpuset.cpus") ]]; then
      cat "${h%/}/cpuset.cpus" >"$d/cpuset.cpus"; cat "${h%/}/cpuset.mems" >"$d/cpuset.mems"
    fi
  done
}

# start_real_component C: start one part of the real node (`local-cluster start C` too).
start_real_component() {
  real_node_ids
  [[ -f $NODE_DIR/kubelet.yaml ]] || write_real_node_config
  [[ $1 != kubelet ]] || ensure_cgroup_root || { log "cannot create $CGROUP_ROOT in /sys/fs/cgroup/*"; return 1; }
  start_component "$1"; real_wait_component "$1" || return 1
  if [[ $1 == node-ns ]] && ! ip link show "$HOST_VETH" >/dev/null 2>&1; then
    setup_node_veth || { log "the node's veth could not be set up"; return 1; }
  fi
}

# A stopped kube-router enforces nothing, as a cluster with no policy engine (the switch the
# tests use for "NetworkPolicy not enforced"): its rules stay in the node's tables, so their
# hooks go; its next start puts them back.
unhook_kube_router() {
  real_node_ids
  local chain n
  for chain in INPUT FORWARD OUTPUT; do
    while n=$(in_node_ns iptables -L "$chain" -n --line-numbers |
      awk -v c="KUBE-ROUTER-$chain" '$2 == c {print $1; exit}') && [[ -n $n ]]; do
      in_node_ns iptables -D "$chain" "$n" || return 1
    done
  done
}

start_real_node() {
  real_node_ids
  write_real_node_config
  local c
  for c in node-ns apiserver-link apiserver-link-node registry registry-private outside; do
    start_real_component "$c" || return 1
  done
  push_store_images || return 1
  for c in containerd kubelet; do start_real_component "$c" || return 1; done
  # kube-router reads its node's addresses from the Node object at start.
  wait_until "$NODE_TIMEOUT" kubelet "Node local-node registered" kubectl get node local-node || return 1
  for c in kube-proxy kube-router provisioner; do start_real_component "$c" || return 1; done
  apply_real_node_addons
}

# The `kubernetes` Service's endpoint (the apiserver reconciles none: its address is loopback)
# is the node's address, where apiserver-link-node forwards; then the cluster DNS.
apply_real_node_addons() {
  kubectl apply -f - -f "$HERE/real-node/coredns.yaml" >>"$STATE/logs/apply.log" 2>&1 <<EOF || {
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes-localcluster
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: localcluster}
addressType: IPv4
endpoints: [{addresses: [$VETH_NODE_IP], conditions: {ready: true}}]
ports: [{name: https, port: $APISERVER_PORT, protocol: TCP}]
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor, labels: {app.kubernetes.io/managed-by: localcluster}}
handler: runsc
EOF
    log "the real node's add-ons failed:"; tail -n 10 "$STATE/logs/apply.log" | sed 's/^/    /' >&2; return 1; }
}

# pids_in_cgroups: every process in a cgroup under the kubelet's cgroup root (containers, shims).
pids_in_cgroups() {
  local d
  for d in /sys/fs/cgroup/*"$CGROUP_ROOT"; do
    [[ -d $d ]] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}

# kill_node_containers: every container of this node with its shim. The kubelet runs without
# QoS cgroups, so containerd puts containers in /k8s.io/ID of each hierarchy, outside the node's
# cgroup root, and in mount namespaces of their own: a killed shim leaves them running, reparented
# to init. Their cgroups are removed once they are gone (runc never deletes them).
kill_node_containers() {
  local shims=() children=() cgroups=() q stat ppid line
  for q in /proc/[0-9]*; do
    [[ $(tr '\0' ' ' 2>/dev/null <"$q/cmdline") == *containerd-shim*"-address $NODE_DIR/containerd.sock"* ]] &&
      shims+=("${q#/proc/}")
  done
  [[ ${#shims[@]} -gt 0 ]] || return 0
  for q in /proc/[0-9]*; do
    { stat=$(<"$q/stat"); } 2>/dev/null || continue  # it may have ended since the glob
    read -r _ ppid _ <<<"${stat##*) }"  # after the command's name, which may hold spaces
    [[ " ${shims[*]} " == *" $ppid "* ]] || continue
    children+=("${q#/proc/}")
    while IFS= read -r line; do cgroups+=("${line#*:*:}"); done < <(cat "$q/cgroup" 2>/dev/null)
  done
  kill -KILL "${children[@]}" "${shims[@]}" 2>/dev/null || true  # some may be gone already
  local c h
  for _ in $(seq 20); do
    local left=0
    for c in $(printf '%s\n' "${cgroups[@]}" | grep '^/k8s.io/' | sort -u); do
      for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
        [[ -d ${h%/}$c ]] && { rmdir "${h%/}$c" 2>/dev/null || left=1; }
      done
    done
    [[ $left == 0 ]] && break
    sleep 0.5
  done
  [[ $left == 0 ]] || log "warning: containers' cgroups under /k8s.io remain"
  # The parent too, once empty (rmdir refuses while another node's containers are in it).
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do rmdir "${h%/}/k8s.io" 2>/dev/null || true; done
  return 0
}

# stop_real_node: containers, shims and the node's processes, then its cgroups; the namespaces
# and the veth go with their last process.
stop_real_node() {
  real_node_ids
  local c p ns_mnt
  for c in provisioner kube-router kube-proxy kubelet; do stop_component "$c"; done
  kill_node_containers
  if p=$(node_ns_pid); then
    ns_mnt=$(readlink "/proc/$p/ns/mnt")
    stop_component containerd
    # Shims and containers outlive containerd (they are reparented to init): every process in
    # the node's mount namespace or its cgroups goes.
    local pids=() q
    for q in /proc/[0-9]*; do
      [[ ${q#/proc/} == "$p" ]] && continue
      [[ $(readlink "$q/ns/mnt" 2>/dev/null) == "$ns_mnt" ]] && pids+=("${q#/proc/}")
    done
    mapfile -t -O "${#pids[@]}" pids < <(pids_in_cgroups)
    # A process may end between the listing and the kill: kill's 1 must not end `down` (set -e).
    [[ ${#pids[@]} -eq 0 ]] || kill -KILL "${pids[@]}" 2>/dev/null || true
    sleep 0.5
  fi
  for c in outside registry-private registry apiserver-link-node apiserver-link node-ns; do stop_component "$c"; done
  # A cgroup whose last process is still being reaped is busy for a moment: retry.
  local d left
  for _ in $(seq 20); do
    left=0
    for d in /sys/fs/cgroup/*"$CGROUP_ROOT"; do
      [[ -d $d ]] || continue
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
      [[ -d $d ]] && left=1
    done
    [[ $left == 0 ]] && break
    sleep 0.5
  done
  [[ $left == 0 ]] || log "warning: cgroups under $CGROUP_ROOT remain (/sys/fs/cgroup/*$CGROUP_ROOT)"
  ip link del "$HOST_VETH" 2>/dev/null || true
  remove_outside_hosts_entry
  rm -f "$APISERVER_LINK_SOCK"
  local traces; traces=$(real_node_traces)
  [[ -z $traces ]] || { log "warning: the real node left on the host:"; sed 's/^/    /' <<<"$traces" >&2; }
  return 0
}

# real_node_traces: what of the real node is still on the host (nothing, after a clean stop).
real_node_traces() {
  ip -o link show "$HOST_VETH" 2>/dev/null | awk '{print "link", $2}'
  local d q
  for d in /sys/fs/cgroup/*"$CGROUP_ROOT"; do [[ -d $d ]] && echo "cgroup $d"; done
  for q in /proc/[0-9]*; do
    tr '\0' ' ' <"$q/cmdline" 2>/dev/null | grep -qF -- "$NODE_DIR" && echo "process ${q#/proc/}: $(tr '\0' ' ' <"$q/cmdline")"
  done
  grep -F -- "$NODE_DIR" /proc/self/mountinfo | awk '{print "mount", $5}'
  grep -F -- "$(outside_hosts_marker)" /etc/hosts | sed 's/^/\/etc\/hosts: /'
  return 0
}
