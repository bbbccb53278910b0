// Package v1alpha1 holds the v1alpha1 version of the Monocle API: the Monocle custom resource
// that the monocle-operator turns into a running Monocle (API and web UI, crawler and
// Elasticsearch). The group and kind match the earlier controller-runtime operator (v0.0.2) so
// existing custom resources apply unchanged.
//
// +k8s:deepcopy-gen=package
// +groupName=monocle.monocle.change-metrics.io
package v1alpha1
