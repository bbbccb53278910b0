// Package kubectlmonocle is the kubectl plugin "kubectl monocle": day-2 verbs on a Monocle
// (status, backup, restore, recrawl, hibernate, wake, delete-index, logs) and on the fleet
// rollout (rollout status, resume, undo) that write only what a user could write with
// kubectl, the same annotations and spec fields docs/ describes, or the rollback `kubectl
// rollout undo` writes, as the user's identity, and print what they changed.
//
// Before writing, a verb refuses what the operator would refuse, with the operator's own
// message: it calls the same functions the controller decides with (pkg/controller/day2),
// never a copy of them. What the API server refuses (the CRD's schema and CEL rules) is
// printed as the server words it. cmd/kubectl-monocle only wires this package to the
// process.
package kubectlmonocle
