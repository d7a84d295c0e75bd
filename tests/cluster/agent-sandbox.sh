# shellcheck shell=bash
# Sourced by local-cluster: the released agent-sandbox controller (kubernetes-sigs/agent-sandbox,
# built from the Go source named by AGENT_SANDBOX_SOURCE) in place of the project's own
# sandbox-controller, with its four CRDs as released and a conversion webhook the apiserver
# really reaches. Without a source the project's own controller runs (the fallback).

AS_BIN=$BIN/localcluster-agent-sandbox-controller  # prefix $LC: pid_of accepts it
AS_NAMESPACE=agent-sandbox-system
AS_SERVICE=agent-sandbox-webhook-service
# The apiserver resolves the webhook Service to an EndpointSlice address (aggregator routing);
# EndpointSlices may not hold loopback addresses, so the webhook gets an address of its own
# (outside 127/8) on the lo link: the kernel here has no dummy links.
AS_LINK=lo
AS_LINK_ADDR=10.246.0.1
CHOICE_FILE=$STATE/sandbox-controller

# The choice is made once per state dir (the installed CRDs depend on it); `start` reuses it.
choose_controller() {
  [[ -f $CHOICE_FILE ]] && return 0
  local src=${AGENT_SANDBOX_SOURCE:-}
  if [[ -z $src ]]; then
    echo own >"$CHOICE_FILE"; return 0
  fi
  [[ -d $src/cmd/agent-sandbox-controller && -d $src/k8s/crds ]] ||
    die "AGENT_SANDBOX_SOURCE=$src is not an agent-sandbox source tree (no cmd/agent-sandbox-controller, k8s/crds)"
  case ${AGENT_SANDBOX_ONLY_VERSION:-} in
    ""|v1beta1) ;;
    *) die "AGENT_SANDBOX_ONLY_VERSION=$AGENT_SANDBOX_ONLY_VERSION: only v1beta1 (agent-sandbox 1.0's CRDs) or empty" ;;
  esac
  # The source dir last: read into the last variable, a path keeps its spaces.
  echo "released ${AGENT_SANDBOX_ONLY_VERSION:--} $(cd "$src" && pwd)" >"$CHOICE_FILE"
}

# released_choice: "ONLY SRC" when this state dir runs the released controller (ONLY: the one
# version its CRDs serve, or -); fails otherwise.
released_choice() {
  [[ -f $CHOICE_FILE ]] || return 1
  local kind only src
  read -r kind only src <"$CHOICE_FILE"
  [[ $kind == released && -n $src ]] || return 1
  echo "$only $src"
}

# released_source: prints the source dir when this state dir runs the released controller.
released_source() {
  local choice
  choice=$(released_choice) || return 1
  echo "${choice#* }"
}

# only_version: prints v1beta1 when the released CRDs are installed as 1.0 ships them (v1alpha1
# removed, no conversion webhook, the controller without its webhook); fails otherwise.
only_version() {
  local choice
  choice=$(released_choice) || return 1
  [[ ${choice%% *} != - ]] || return 1
  echo "${choice%% *}"
}

warn_other_choice() {
  local src
  src=$(released_source) || src=""
  if [[ -n ${AGENT_SANDBOX_SOURCE:-} && -z $src ]]; then
    log "note: $STATE runs the project's own sandbox-controller; down and up to switch to AGENT_SANDBOX_SOURCE"
  elif [[ -z ${AGENT_SANDBOX_SOURCE:-} && -n $src ]]; then
    log "note: $STATE runs the released agent-sandbox controller from $src"
  fi
  local only
  only=$(only_version) || only=""
  if [[ -n $src && ${AGENT_SANDBOX_ONLY_VERSION:-} != "$only" ]]; then
    log "note: $STATE's CRDs serve ${only:-every released version}; down and up to change AGENT_SANDBOX_ONLY_VERSION"
  fi
}

agent_sandbox_hash() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; go version) |
    sha256sum | cut -c1-32
}

# The source is its own Go module (the module proxy refuses sigs.k8s.io/agent-sandbox); built
# from where it lies, read-only, into bin/, keyed by a hash of every file of it.
build_agent_sandbox() {
  local src=$1 hash
  find_go
  mkdir -p "$BIN"
  exec 9>"$BIN/.build-agent-sandbox.lock"
  flock 9
  hash=$(agent_sandbox_hash "$src")
  if [[ -x $AS_BIN && -f $BIN/.agent-sandbox-hash && $(<"$BIN/.agent-sandbox-hash") == "$hash" ]]; then
    exec 9>&-; return 0
  fi
  log "building the released agent-sandbox controller from $src; a cold build takes minutes"
  local t0=$SECONDS
  # Built in place with the source's own go.mod and go.sum (the directory may be read-only).
  (cd "$src" && GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false" \
    go build -o "$AS_BIN.new" ./cmd/agent-sandbox-controller) ||
    die "go build of $src/cmd/agent-sandbox-controller failed"
  mv -f "$AS_BIN.new" "$AS_BIN"
  echo "$hash" >"$BIN/.agent-sandbox-hash"
  log "built agent-sandbox controller in $((SECONDS - t0))s"
  exec 9>&-
}

# CRD files to install: the source's four as released, or the project's own Sandbox CRD.
crd_files() {
  local src f
  shopt -s nullglob
  for f in "$REPO"/deploy/crds/*.yaml "$REPO"/deploy/crds/*.yml; do echo "$f"; done
  if src=$(released_source); then
    local only
    if only=$(only_version); then
      mkdir -p "$STATE/crds"
      for f in "$src"/k8s/crds/*.yaml; do
        "$LC" crd-only-version "$only" "$f" "$STATE/crds/$(basename "$f")" ||
          die "could not make $(basename "$f") serve $only only"
        echo "$STATE/crds/$(basename "$f")"
      done
    else
      for f in "$src"/k8s/crds/*.yaml; do echo "$f"; done
    fi
  else
    echo "$HERE/manifests/agents.x-k8s.io_sandboxes.yaml"
  fi
  shopt -u nullglob
}

# Manifests other than the Sandbox CRD (which crd_files chooses).
manifest_files() {
  local f
  shopt -s nullglob
  for f in "$HERE"/manifests/*.yaml "$HERE"/manifests/*.yml; do
    [[ $(basename "$f") == agents.x-k8s.io_sandboxes.yaml ]] || echo "$f"
  done
  shopt -u nullglob
}

ensure_agent_sandbox_env() {
  grep -q '^AGENT_SANDBOX_WEBHOOK_PORT=' "$STATE/env" 2>/dev/null && return 0
  local port; port=$("$LC" free-ports 1)
  echo "AGENT_SANDBOX_WEBHOOK_PORT=$port" >>"$STATE/env"
  AGENT_SANDBOX_WEBHOOK_PORT=$port
}

webhook_address_present() { ip -4 -o addr show dev "$AS_LINK" 2>/dev/null | grep -qF " $AS_LINK_ADDR/"; }

# webhook_address: the non-loopback address the webhook is reached at. As root one of the
# harness's own on lo; otherwise the host's first global IPv4 address.
webhook_address() {
  if [[ $EUID -eq 0 ]]; then
    webhook_address_present || ip addr add "$AS_LINK_ADDR/32" dev "$AS_LINK" ||
      die "could not add $AS_LINK_ADDR to $AS_LINK for the webhook"
    echo "$AS_LINK_ADDR"; return 0
  fi
  local addr
  addr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
  [[ -n $addr ]] || die "no non-loopback IPv4 address for the agent-sandbox webhook (run as root)"
  echo "$addr"
}

remove_webhook_address() {
  [[ $EUID -eq 0 ]] && webhook_address_present && ip addr del "$AS_LINK_ADDR/32" dev "$AS_LINK"
  return 0
}

# The Service the CRDs' conversion webhook names, without selector, and its EndpointSlice at
# the controller's webhook port (the controller serves on every address).
apply_webhook_service() {
  local addr f=$STATE/agent-sandbox-webhook.yaml
  addr=$(webhook_address)
  cat >"$f" <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $AS_NAMESPACE
---
apiVersion: v1
kind: Service
metadata:
  name: $AS_SERVICE
  namespace: $AS_NAMESPACE
spec:
  ports:
  - name: https
    port: 443
    targetPort: $AGENT_SANDBOX_WEBHOOK_PORT
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $AS_SERVICE-local
  namespace: $AS_NAMESPACE
  labels:
    kubernetes.io/service-name: $AS_SERVICE
    endpointslice.kubernetes.io/managed-by: local-cluster
addressType: IPv4
endpoints:
- addresses: [$addr]
  conditions: {ready: true}
ports:
- name: https
  port: $AGENT_SANDBOX_WEBHOOK_PORT
  protocol: TCP
EOF
  apply_files "$f"
}

agent_sandbox_args() {
  ARGS=(--kubeconfig "$KUBECONFIG_ADMIN" --extensions --leader-elect=false
    --metrics-bind-address=0
    --health-probe-bind-address="127.0.0.1:$SANDBOX_CONTROLLER_HEALTH_PORT"
    --webhook-port="$AGENT_SANDBOX_WEBHOOK_PORT" --webhook-cert-dir="$STATE/agent-sandbox-webhook"
    --webhook-namespace="$AS_NAMESPACE" --webhook-service-name="$AS_SERVICE")
  if only_version >/dev/null; then ARGS+=(--enable-webhook=false); fi
}

controller_description() {
  local src
  if src=$(released_source); then
    echo "released agent-sandbox controller (--extensions) from $src$(only_version >/dev/null &&
      echo ", CRDs serving $(only_version) only, no webhook")"
  else echo "the project's own sandbox-controller (fallback: no AGENT_SANDBOX_SOURCE)"; fi
}
