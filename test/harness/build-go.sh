#!/usr/bin/env bash
# Builds the real peers of the test harness from a pinned Go module and caches
# the binaries in test/.cache/bin/<name>-<go.sum hash>/ (git-ignored).
# Usage: build-go.sh <module dir> <name> <pkg>=<binary> ...
# Prints the binary directory on stdout. A second run with the same go.sum is a no-op.
set -euo pipefail
moddir=$(cd "$1" && pwd); name=$2; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
hash=$(cat "$moddir/go.mod" "$moddir/go.sum" | sha256sum | cut -c1-16)
out="$root/test/.cache/bin/$name-$hash"
if [[ -f "$out/.complete" ]]; then echo "$out"; exit 0; fi
mkdir -p "$out"
K8S_VERSION=${K8S_VERSION:-v1.36.3}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36 -X k8s.io/component-base/version.gitTreeState=clean"
cd "$moddir"
for spec in "$@"; do
  pkg=${spec%%=*}; bin=${spec#*=}
  if [[ ! -x "$out/$bin" ]]; then
    echo "building $bin from $pkg" >&2
    start=$SECONDS
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$bin.tmp" "$pkg"
    mv "$out/$bin.tmp" "$out/$bin"
    echo "built $bin in $((SECONDS-start))s ($(du -m "$out/$bin" | cut -f1) MB)" >&2
  fi
done
touch "$out/.complete"
echo "$out"
