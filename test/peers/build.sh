#!/usr/bin/env bash
# Builds (or finds cached) the plugin peers of the test harness and prints one
# `name=<absolute binary path>` line per binary on stdout (build logs go to stderr).
#   go/   k8s.io/kubernetes v1.36.3 set: sample-device-plugin, dra-test-driver,
#         csi-mock-driver (our main around k8s' e2e CSI mock), test-device-plugin
#         (our main around k8s' e2e_node test device plugin), and stand-ins for
#         csi-node-driver-registrar and hostpathplugin (their upstream modules are
#         refused by the Go module proxy reachable here)
#   kwok/ sigs.k8s.io/kwok v0.8.0 (own module: newer grpc/otel/k8s.io pins)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../harness/build-go.sh
# build-go.sh keys its cache on go.mod+go.sum only: add the stand-ins' sources to the name.
src=$(cd "$here/go" && find cmd -name '*.go' -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-8)
peers=$("$build" "$here/go" "peers-$src" \
  k8s.io/kubernetes/test/images/sample-device-plugin=sample-device-plugin \
  ./cmd/csi-node-driver-registrar=csi-node-driver-registrar \
  ./cmd/hostpathplugin=hostpathplugin \
  k8s.io/kubernetes/test/e2e/dra/test-driver=dra-test-driver \
  ./cmd/csi-mock-driver=csi-mock-driver \
  ./cmd/test-device-plugin=test-device-plugin | tail -n1)
kwok=$("$build" "$here/kwok" kwok sigs.k8s.io/kwok/cmd/kwok=kwok | tail -n1)
for bin in sample-device-plugin csi-node-driver-registrar hostpathplugin dra-test-driver csi-mock-driver test-device-plugin; do echo "$bin=$peers/$bin"; done
echo "kwok=$kwok/kwok"
