# shellcheck shell=bash
# Sourced by the scripts that start the local cluster: run the released agent-sandbox controller
# when its source sits next to the repo (../shared/upstream). An explicitly set (even empty)
# AGENT_SANDBOX_SOURCE wins; empty selects the project's own controller.
if [ -z "${AGENT_SANDBOX_SOURCE+set}" ]; then
  _agent_sandbox_default="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/upstream/agent-sandbox-v0.5.6"
  if [ -d "$_agent_sandbox_default" ]; then
    AGENT_SANDBOX_SOURCE=$(cd "$_agent_sandbox_default" && pwd)
    export AGENT_SANDBOX_SOURCE
  fi
  unset _agent_sandbox_default
fi
