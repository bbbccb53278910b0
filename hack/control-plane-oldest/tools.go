//go:build tools

// Package tools records the main packages that hack/build-control-plane.sh oldest
// builds, so that `go mod tidy -e` keeps their dependencies in go.mod/go.sum (-e: a test of
// k8s.io/kubernetes imports k8s.io/legacy-cloud-providers/vsphere/testing, which no binary
// needs).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
