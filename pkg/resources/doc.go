// Package resources builds the Kubernetes objects a Monocle owns, as pure functions of the
// Monocle and of the inputs the controller gathered (generated keys, content hashes). Nothing
// here talks to the API server; the same inputs always give the same objects, which golden
// files in testdata/ pin.
//
// Facts about Monocle (images, env vars, ports, probes, users) come from Monocle 1.11.2's
// sources as summarised in the project's monocle-facts sheet.
package resources
