#!/bin/sh
# Usage: in-kubelet-ns.sh <device-plugins dir> <command> [args...]
# Runs <command> in a private mount namespace where the hard-coded
# /var/lib/kubelet/device-plugins is <device-plugins dir> (nodelet's
# <root-dir>/device-plugins). Nothing is created or mounted on the host:
# a small tmpfs covers /var/lib/kubelet (or /var/lib when that is absent)
# inside the namespace only (PLUGIN_SOCK_DIR under it is bound back). Needs root and util-linux (unshare, mount).
set -eu
if [ "${NODELET_IN_NS:-}" != 1 ]; then
  NODELET_IN_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
src=$1; shift
# The source stays reachable through the shell's cwd after the tmpfs hides its path.
cd "$src"
if [ -d /var/lib/kubelet ]; then top=/var/lib/kubelet; else top=/var/lib; fi
# A PLUGIN_SOCK_DIR under the covered directory stays reachable through descriptor 3,
# and is bound back at its own path.
keep=
case "${PLUGIN_SOCK_DIR:-}" in "$top"/*) keep=$PLUGIN_SOCK_DIR; exec 3<"$keep" ;; esac
mount -t tmpfs -o size=1m,mode=0755 nodelet-peer "$top"
mkdir -p /var/lib/kubelet/device-plugins
mount --no-canonicalize --bind /proc/self/cwd /var/lib/kubelet/device-plugins
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  mount --no-canonicalize --bind /proc/self/fd/3 "$keep"
  exec 3<&-
fi
cd /
exec "$@"
