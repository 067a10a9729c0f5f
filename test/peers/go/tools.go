//go:build tools

// Package tools pins the upstream main packages that the test harness builds
// from this module: Kubernetes' sample device plugin and DRA test driver (same
// k8s.io/kubernetes version and replaces as the control plane in test/cluster/go);
// the CSI mock driver's packages come in through cmd/csi-mock-driver.
package tools

import (
	_ "k8s.io/kubernetes/test/e2e/dra/test-driver"
	_ "k8s.io/kubernetes/test/images/sample-device-plugin"
)
