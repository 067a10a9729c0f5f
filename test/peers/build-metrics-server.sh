#!/usr/bin/env bash
# Builds (or finds cached) sigs.k8s.io/metrics-server v0.9.0 from the Go module
# proxy (module metrics-server/, cached by go.mod+go.sum hash) and prints the
# binary's absolute path on stdout (build logs go to stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$("$here/../harness/build-go.sh" "$here/metrics-server" metrics-server \
  sigs.k8s.io/metrics-server/cmd/metrics-server=metrics-server | tail -n1)
echo "$dir/metrics-server"
