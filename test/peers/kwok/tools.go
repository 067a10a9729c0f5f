//go:build tools

// Package tools pins kwok (a fake kubelet, the reference for benchmarks). It
// has its own module because kwok's dependencies (grpc, otel, k8s.io/* v0.36.1)
// differ from the k8s.io/kubernetes v1.36.3 set in ../go.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
