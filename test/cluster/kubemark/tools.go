//go:build tools

// Package tools pins kubemark (the hollow node: the upstream kubelet with a fake
// CRI runtime), built as the bench's third peer. Own module: kubemark pulls
// dependencies (e.g. k8s.io/kubernetes/pkg/proxy/nftables) the control plane's
// module does not need, and a separate go.sum keeps the control plane's cache key.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubemark"
)
