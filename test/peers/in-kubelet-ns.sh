#!/bin/sh
# Usage: in-kubelet-ns.sh <device-plugins dir> <command> [args...]
# Runs <command> in a private mount namespace where the hard-coded
# /var/lib/kubelet/device-plugins is <device-plugins dir> (nodelet's
# <root-dir>/device-plugins). Nothing is created or mounted on the host:
# a small tmpfs covers /var/lib/kubelet (or /var/lib when that is absent)
# inside the namespace only. Needs root and util-linux (unshare, mount).
set -eu
if [ "${NODELET_IN_NS:-}" != 1 ]; then
  NODELET_IN_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
src=$1; shift
# The source stays reachable through the shell's cwd after the tmpfs hides its path.
cd "$src"
if [ -d /var/lib/kubelet ]; then top=/var/lib/kubelet; else top=/var/lib; fi
mount -t tmpfs -o size=1m,mode=0755 nodelet-peer "$top"
mkdir -p /var/lib/kubelet/device-plugins
mount --no-canonicalize --bind /proc/self/cwd /var/lib/kubelet/device-plugins
cd /
exec "$@"
