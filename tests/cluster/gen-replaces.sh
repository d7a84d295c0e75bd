#!/usr/bin/env bash
# k8s.io/kubernetes pins its staging modules at v0.0.0; point each at the published
# release that matches the pinned Kubernetes version, read from its own go.mod.
set -euo pipefail
cd "$(dirname "$0")"
k8s_version=$(grep -oE "k8s.io/kubernetes v[0-9.]+" go.mod | head -1 | cut -d" " -f2)
staging_version="v0.${k8s_version#v1.}"
gomod=$(go mod download -json "k8s.io/kubernetes@${k8s_version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
args=()
while read -r module; do
  args+=("-replace=${module}=${module}@${staging_version}")
done < <(awk '$2=="v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$gomod" | sort -u)
go mod edit "${args[@]}"
echo "replaced ${#args[@]} staging modules with ${staging_version}"
