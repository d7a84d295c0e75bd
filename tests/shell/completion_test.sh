#!/usr/bin/env bash
# Loads each checked-in completion script in its own shell and completes a subcommand and a
# flag, the way a user's TAB would.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
failures=0 passed=0
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

if command -v zsh >/dev/null; then
  zsh_complete() {
    zsh -c 'autoload -U +X compinit && compinit -u -d /tmp/.zcompdump-rossoctl-test
            source "$1"; shift; setopt ksharrays
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rossoctl; print -- "${COMPREPLY[*]}"' \
      _ "$root/completions/_rossoctl" "$@"
  }
  expect "zsh subcommand" "$(zsh_complete rossoctl proj)" project
  expect "zsh flag" "$(zsh_complete rossoctl project create --allow-h)" --allow-host
else
  echo "SKIP: zsh not installed" >&2
fi

if command -v fish >/dev/null; then
  fish_complete() { fish --no-config -c "source $root/completions/rossoctl.fish; complete -C '$1'"; }
  expect "fish subcommand" "$(fish_complete 'rossoctl sand')" sandbox
  expect "fish flag" "$(fish_complete 'rossoctl sandbox restart --ti')" --timeout
else
  echo "SKIP: fish not installed" >&2
fi

echo "completion: $passed passed, $failures failed"
[ $failures -eq 0 ]
