//go:build tools

// Package tools pins sigs.k8s.io/metrics-server for the e2e harness
// (built by ../../harness/build-go.sh, see ../metrics-server.ts).
package tools

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server"
