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
# A stand-in rossoctl on PATH answers __complete KIND with "KIND-in-NAMESPACE[-CONTEXT][-FLAG...]"
# ("sandbox-paths-in-...:" for sandbox cp), so a test sees which -n, --context, --server... reached
# it, and prints "RAN: ARGS" for any other command line; a directory with files for the path flags.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/files"
real=${ROSSOCTL:-$root/build/rossoctl}
completions=${COMPLETIONS:-$root/completions}  # the scripts under test
cat >"$work/bin/rossoctl" <<STUB
#!/usr/bin/env bash
[ "\$1" = completion ] && exec "$real" "\$@"
STUB
cat >>"$work/bin/rossoctl" <<'STUB'
if [ "$1" != __complete ]; then echo "RAN: $*"; exit 0; fi  # a completed line run at the prompt
kind=$2 ns=default ctx="" tags=""
shift 2
while [ $# -gt 0 ]; do
  case $1 in
    -n|--namespace) ns=$2; shift ;;
    -n=*|--namespace=*) ns=${1#*=} ;;
    --context) ctx=-$2; shift ;;
    -s|--server|--certificate-authority|--token|--user|--cluster|-s=*|--server=*|--certificate-authority=*|--token=*|--user=*|--cluster=*)
      # "-server", "-authority", "-token"...: which cluster-selecting flags reached __complete
      tag=${1%%=*} tag=${tag##*-}
      [ "$tag" = s ] && tag=server
      tags="$tags-$tag"
      [ "$1" = "${1%%=*}" ] && shift ;;
    --insecure-skip-tls-verify*) tags="$tags-insecure" ;;
  esac
  shift
done
colon=""
[ "$kind" = sandbox-paths ] && colon=:
echo "$kind-in-$ns$ctx$tags$colon"
STUB
chmod +x "$work/bin/rossoctl"
ln -s rossoctl "$work/bin/kubectl-rosso"
touch "$work/files/agent.env" "$work/files/kubeconfig.yaml"
export PATH="$work/bin:$PATH"
cd "$work/files"
ran() {  # ran NAME OUTPUT LINE: the shell ran exactly "rossoctl LINE" (what TAB made of it)
  if grep -aqxF -- "RAN: $3" <<<"$2"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $1: expected the line 'rossoctl $3' to run; ran: $(grep -a '^RAN:' <<<"$2" | tr '\n' '|')" >&2
    failures=$((failures + 1))
  fi
}
# Types lines (a TAB character is the TAB key, then Enter) into an interactive shell on a
# pseudo-terminal, so its own line editor splits the words and inserts the completion.
have_pty=1
command -v python3 >/dev/null || { have_pty=0; echo "SKIP: python3 not installed: no terminal tests" >&2; }
on_terminal() { timeout 60 python3 "$root/tests/shell/pty_type.py" '@@READY@@' "$@"; }
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
    _ "$completions/rossoctl.bash" "$@"
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
# Real readline (bash -i on a terminal) splits words at COMP_WORDBREAKS, '=' and ':' among them.
if ((have_pty)); then
  printf '%s\n' "PS1='@@READY@@ '" "source '$completions/rossoctl.bash'" >"$work/bashrc"
  tab=$'\t'
  typed=$(on_terminal bash --noprofile --rcfile "$work/bashrc" -i <<EOF
rossoctl sand$tab
rossoctl --namespace=team2 agents get $tab
rossoctl sandbox get -n=team3 $tab
rossoctl sandbox list --namespace=$tab
rossoctl --kubeconfig=kub$tab
rossoctl sandbox run --file=ag$tab
rossoctl version -o=y$tab
rossoctl agents import from-image --envVarsFile=ag$tab
rossoctl sandbox cp sand$tab
rossoctl sandbox cp orders agent.e$tab
rossoctl --server=https://b:6443 --insecure-skip-tls-verify sandbox get $tab
rossoctl --certificate-authority=ca.crt --token=T sandbox logs $tab
EOF
  )
  ran "bash terminal subcommand" "$typed" "sandbox"
  ran "bash terminal --namespace= names" "$typed" "--namespace=team2 agents get agents-in-team2"
  ran "bash terminal -n= names" "$typed" "sandbox get -n=team3 sandboxes-in-team3"
  ran "bash terminal --namespace= value" "$typed" "sandbox list --namespace=projects-in-default"
  ran "bash terminal --kubeconfig= files" "$typed" "--kubeconfig=kubeconfig.yaml"
  ran "bash terminal --file= files" "$typed" "sandbox run --file=agent.env"
  ran "bash terminal -o= values" "$typed" "version -o=yaml"
  ran "bash terminal --envVarsFile= files" "$typed" "agents import from-image --envVarsFile=agent.env"
  ran "bash terminal cp NAME:" "$typed" "sandbox cp sandbox-paths-in-default:"
  ran "bash terminal cp local file" "$typed" "sandbox cp orders agent.env"
  ran "bash terminal --server= --insecure-skip-tls-verify reach __complete" "$typed" \
    "--server=https://b:6443 --insecure-skip-tls-verify sandbox get sandboxes-in-default-server-insecure"
  ran "bash terminal --certificate-authority= --token= reach __complete" "$typed" \
    "--certificate-authority=ca.crt --token=T sandbox logs sandboxes-in-default-authority-token"
fi
expect "bash global --certificate-authority --token" "$(bash_complete rossoctl --certificate-authority ca.crt --token T sandbox get '')" sandboxes-in-default-authority-token
expect "bash global -s --insecure-skip-tls-verify" "$(bash_complete rossoctl -s https://b --insecure-skip-tls-verify agents get '')" agents-in-default-server-insecure
expect "bash cp offers NAME: and local files" "$(bash_complete rossoctl sandbox cp '')" sandbox-paths-in-default:
expect "bash cp offers local files" "$(bash_complete rossoctl sandbox cp '')" agent.env

plugin=$(bash "$completions/kubectl_complete-rosso" sandbox get -n team1 '')
expect "kubectl plugin names" "$plugin" sandboxes-in-team1
expect "kubectl plugin directive" "$plugin" :4
expect "kubectl plugin files" "$(bash "$completions/kubectl_complete-rosso" --kubeconfig kube)" kubeconfig.yaml
# kubectl's __complete protocol: for --flag=value the candidates are the values alone.
pfile=$(bash "$completions/kubectl_complete-rosso" sandbox run --file=ag)
expect "kubectl plugin --file= files" "$pfile" agent.env
expect "kubectl plugin --file= file directive" "$pfile" :0
refuse "kubectl plugin --file= values alone" "$pfile" --file=agent.env
pout=$(bash "$completions/kubectl_complete-rosso" version -o=)
expect "kubectl plugin -o= values" "$pout" json
refuse "kubectl plugin -o= values alone" "$pout" -o=json
expect "kubectl plugin --namespace= projects" "$(bash "$completions/kubectl_complete-rosso" sandbox get --namespace=)" projects-in-default

if command -v zsh >/dev/null; then
  zsh_complete() {
    zsh -c 'autoload -U +X compinit && compinit -u -d /tmp/.zcompdump-rossoctl-test
            source "$1"; shift; setopt ksharrays
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rossoctl_bash; print -- "${COMPREPLY[*]}"' \
      _ "$completions/_rossoctl" "$@"
  }
  expect "zsh subcommand" "$(zsh_complete rossoctl proj)" project
  expect "zsh flag" "$(zsh_complete rossoctl project create --allow-h)" --allow-host
  expect "zsh names with -n" "$(zsh_complete rossoctl sandbox get -n team1 '')" sandboxes-in-team1
  expect "zsh --from-env-file files" "$(zsh_complete rossoctl sandbox set-env o --from-env-file ag)" agent.env
  zdeploy=$(zsh_complete rossoctl agents import --deployment-type '')
  expect "zsh --deployment-type" "$zdeploy" statefulset
  refuse "zsh --deployment-type is no command" "$zdeploy" from-image
  # Installed the documented way ($fpath, then compinit): the FIRST TAB of a session completes.
  if ((have_pty)); then
    mkdir -p "$work/zfunc" "$work/zdot"
    cp "$completions/_rossoctl" "$work/zfunc/_rossoctl"
    printf '%s\n' "PROMPT='@@READY@@ '" "fpath=('$work/zfunc' \$fpath)" \
      "autoload -U compinit && compinit -u -d '$work/zcompdump'" >"$work/zdot/.zshrc"
    tab=$'\t'
    ztyped=$(ZDOTDIR="$work/zdot" on_terminal zsh -i <<EOF
rossoctl sand$tab
rossoctl --kubeconfig=kub$tab
rossoctl --namespace=team2 agents get $tab
rossoctl sandbox run --file=ag$tab
EOF
    )
    ran "zsh first TAB after compinit" "$ztyped" "sandbox"
    ran "zsh --kubeconfig= files" "$ztyped" "--kubeconfig=kubeconfig.yaml"
    ran "zsh --namespace= names" "$ztyped" "--namespace=team2 agents get agents-in-team2"
    ran "zsh --file= files" "$ztyped" "sandbox run --file=agent.env"
  fi
else
  echo "SKIP: zsh not installed" >&2
fi

if command -v fish >/dev/null; then
  fish_complete() { fish --no-config -c "source $completions/rossoctl.fish; complete -C '$1'"; }
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
  # Each line is tied to its whole command path: same-named subcommands do not bleed.
  fagents=$(fish_complete 'rossoctl agents get ')
  expect "fish agents get names" "$fagents" agents-in-default
  refuse "fish agents get offers no sandboxes" "$fagents" sandboxes-in-default
  fpdelete=$(fish_complete 'rossoctl project delete ')
  expect "fish project delete names" "$fpdelete" projects-in-default
  refuse "fish project delete offers no agents" "$fpdelete" agents-in-default
  refuse "fish agents delete offers no projects" "$(fish_complete 'rossoctl agents delete ')" projects-in-default
  fpdflags=$(fish_complete 'rossoctl project delete -')
  expect "fish project delete flags" "$fpdflags" --yes
  refuse "fish project delete takes no --output" "$fpdflags" --output
  fplflags=$(fish_complete 'rossoctl project list -')
  expect "fish project list flags" "$fplflags" --selector
  refuse "fish project list takes no --all-namespaces" "$fplflags" --all-namespaces
  refuse "fish project list takes no -A" "$fplflags" "List sandboxes in every namespace"
  fshells=$(fish_complete 'rossoctl completion ')
  for shell in bash zsh fish; do expect "fish completion $shell" "$fshells" "$shell"; done
  refuse "fish agents offers no sandbox subcommands" "$(fish_complete 'rossoctl agents ')" set-env
  fcp=$(fish_complete 'rossoctl sandbox cp ')
  expect "fish cp NAME:" "$fcp" sandbox-paths-in-default:
  expect "fish cp local files" "$fcp" agent.env
  expect "fish --insecure-skip-tls-verify reaches __complete" \
    "$(fish_complete 'rossoctl --insecure-skip-tls-verify --server=https://b sandbox get ')" sandboxes-in-default-insecure-server
  expect "fish --kubeconfig= files" "$(fish_complete 'rossoctl --kubeconfig=kub')" kubeconfig.yaml
  expect "fish names after -n value" "$(fish_complete 'rossoctl -n team1 agents get ')" agents-in-team1
else
  echo "SKIP: fish not installed" >&2
fi

echo "completion: $passed passed, $failures failed"
[ $failures -eq 0 ]
