#!/usr/bin/env bash
# Loads each checked-in completion script in its own shell and completes a subcommand and a
# flag, the way a user's TAB would.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
failures=0 passed=0
refuse() {  # refuse NAME OUTPUT WORD: WORD must not be offered
  if grep -qw -- "$3" <<<"$2"; then
    echo "FAIL: $1: did not expect '$3' in: $2" >&2
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}
# A stand-in rossoctl on PATH answers __complete KIND with "KIND-in-NAMESPACE[-CONTEXT]", so a
# test sees which -n and --context reached it; a directory with files for the path flags.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/files"
real=${ROSSOCTL:-$root/build/rossoctl}
cat >"$work/bin/rossoctl" <<STUB
#!/usr/bin/env bash
[ "\$1" = completion ] && exec "$real" "\$@"
STUB
cat >>"$work/bin/rossoctl" <<'STUB'
[ "$1" = __complete ] || exit 0
kind=$2 ns=default ctx=""
shift 2
while [ $# -gt 0 ]; do
  case $1 in
    -n|--namespace) ns=$2; shift ;;
    --namespace=*) ns=${1#*=} ;;
    --context) ctx=-$2; shift ;;
  esac
  shift
done
echo "$kind-in-$ns$ctx"
STUB
chmod +x "$work/bin/rossoctl"
ln -s rossoctl "$work/bin/kubectl-rosso"
touch "$work/files/agent.env" "$work/files/kubeconfig.yaml"
export PATH="$work/bin:$PATH"
cd "$work/files"
expect() {  # expect NAME OUTPUT WORD
  if grep -qw -- "$3" <<<"$2"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $1: expected '$3' in: $2" >&2
    failures=$((failures + 1))
  fi
}

bash_complete() {  # words... (the last one is being completed)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rossoctl; echo "${COMPREPLY[*]}"' \
    _ "$root/completions/rossoctl.bash" "$@"
}
expect "bash subcommand" "$(bash_complete rossoctl sand)" sandbox
expect "bash nested subcommand" "$(bash_complete rossoctl sandbox set)" set-env
expect "bash flag" "$(bash_complete rossoctl sandbox verify --egr)" --egress-target
expect "bash global flag" "$(bash_complete rossoctl version --kubec)" --kubeconfig
expect "bash names with -n" "$(bash_complete rossoctl sandbox get -n team1 '')" sandboxes-in-team1
expect "bash names with --namespace=" "$(bash_complete rossoctl --namespace=team2 agents get '')" agents-in-team2
expect "bash names with --context" "$(bash_complete rossoctl sandbox restart --context kind -n t3 '')" sandboxes-in-t3-kind
expect "bash -n offers projects" "$(bash_complete rossoctl sandbox list -n '')" projects-in-default
expect "bash as kubectl-rosso" "$(bash_complete kubectl-rosso sandbox get -n team1 '')" sandboxes-in-team1
expect "bash as kubectl rosso" "$(bash_complete kubectl rosso sandbox get -n team1 '')" sandboxes-in-team1
expect "bash --from-env-file files" "$(bash_complete rossoctl sandbox set-env o --from-env-file ag)" agent.env
expect "bash --envVarsFile files" "$(bash_complete rossoctl agents import from-image --envVarsFile ag)" agent.env
expect "bash --kubeconfig files" "$(bash_complete rossoctl --kubeconfig kube)" kubeconfig.yaml
expect "bash --file files" "$(bash_complete rossoctl sandbox run --file ag)" agent.env
expect "bash --artifacts files" "$(bash_complete rossoctl sandbox run --artifacts ag)" agent.env
deployment=$(bash_complete rossoctl agents import --deployment-type '')
expect "bash --deployment-type" "$deployment" sandbox
refuse "bash --deployment-type is no command" "$deployment" from-image
pss=$(bash_complete rossoctl project create t --pod-security '')
expect "bash --pod-security" "$pss" restricted
refuse "bash --pod-security is no project" "$pss" projects-in-default
version=$(bash_complete rossoctl version -o '')
expect "bash version -o" "$version" yaml
refuse "bash version -o takes no table" "$version" table
expect "bash list -o" "$(bash_complete rossoctl sandbox list -o '')" wide
refuse "bash --timeout value is no name" "$(bash_complete rossoctl agents wait --timeout '')" agents-in-default
plugin=$(bash "$root/completions/kubectl_complete-rosso" sandbox get -n team1 '')
expect "kubectl plugin names" "$plugin" sandboxes-in-team1
expect "kubectl plugin directive" "$plugin" :4
expect "kubectl plugin files" "$(bash "$root/completions/kubectl_complete-rosso" --kubeconfig kube)" kubeconfig.yaml

if command -v zsh >/dev/null; then
  zsh_complete() {
    zsh -c 'autoload -U +X compinit && compinit -u -d /tmp/.zcompdump-rossoctl-test
            source "$1"; shift; setopt ksharrays
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rossoctl; print -- "${COMPREPLY[*]}"' \
      _ "$root/completions/_rossoctl" "$@"
  }
  expect "zsh subcommand" "$(zsh_complete rossoctl proj)" project
  expect "zsh flag" "$(zsh_complete rossoctl project create --allow-h)" --allow-host
  expect "zsh names with -n" "$(zsh_complete rossoctl sandbox get -n team1 '')" sandboxes-in-team1
  expect "zsh --from-env-file files" "$(zsh_complete rossoctl sandbox set-env o --from-env-file ag)" agent.env
  zdeploy=$(zsh_complete rossoctl agents import --deployment-type '')
  expect "zsh --deployment-type" "$zdeploy" statefulset
  refuse "zsh --deployment-type is no command" "$zdeploy" from-image
else
  echo "SKIP: zsh not installed" >&2
fi

if command -v fish >/dev/null; then
  fish_complete() { fish --no-config -c "source $root/completions/rossoctl.fish; complete -C '$1'"; }
  expect "fish subcommand" "$(fish_complete 'rossoctl sand')" sandbox
  expect "fish flag" "$(fish_complete 'rossoctl sandbox restart --ti')" --timeout
  expect "fish names with -n" "$(fish_complete 'rossoctl sandbox get -n team1 ')" sandboxes-in-team1
  expect "fish names with --context" "$(fish_complete 'rossoctl agents get --context kind -n t3 ')" agents-in-t3-kind
  expect "fish as kubectl-rosso" "$(fish_complete 'kubectl-rosso sandbox get -n team1 ')" sandboxes-in-team1
  expect "fish --from-env-file files" "$(fish_complete 'rossoctl sandbox set-env o --from-env-file ag')" agent.env
  expect "fish --kubeconfig files" "$(fish_complete 'rossoctl sandbox list --kubeconfig kube')" kubeconfig.yaml
  fdeploy=$(fish_complete 'rossoctl agents import from-image --deployment-type ')
  expect "fish --deployment-type" "$fdeploy" job
  refuse "fish --deployment-type is no command" "$fdeploy" from-image
  fversion=$(fish_complete 'rossoctl version -o ')
  expect "fish version -o" "$fversion" json
  refuse "fish version -o takes no table" "$fversion" table
else
  echo "SKIP: fish not installed" >&2
fi

echo "completion: $passed passed, $failures failed"
[ $failures -eq 0 ]
