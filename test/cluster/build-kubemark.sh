#!/usr/bin/env bash
# Builds (or finds cached) kubemark, the hollow node: the upstream kubelet
# (k8s.io/kubernetes/cmd/kubemark v1.36.3, `--morph=kubelet`) with a fake CRI
# runtime. Own module (kubemark/): it needs dependencies the control plane's
# module does not, and its own go.sum keeps the control plane's cache key.
# Prints `kubemark=<absolute binary path>`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$("$here/../harness/build-go.sh" "$here/kubemark" kubemark k8s.io/kubernetes/cmd/kubemark=kubemark | tail -n1)
echo "kubemark=$dir/kubemark"
