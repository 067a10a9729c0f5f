#!/usr/bin/env bash
# Builds (or finds cached) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../harness/build-go.sh" "$here/go" control-plane \
  go.etcd.io/etcd/server/v3=etcd \
  k8s.io/kubernetes/cmd/kube-apiserver=kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager=kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler=kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl=kubectl
