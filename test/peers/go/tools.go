//go:build tools

// Package tools pins the upstream main packages that the test harness builds
// from this module: Kubernetes' sample device plugin (same k8s.io/kubernetes
// version and replaces as the control plane in test/cluster/go).
package tools

import (
	_ "k8s.io/kubernetes/test/images/sample-device-plugin"
)
