// Package day2 holds the pure planners of a Monocle's day-2 operations and the conditions
// they report: backups, restores, version upgrades, maintenance requests, storage growth and
// API restarts after a full disk, stuck crawlers, crawler progress, the indices of removed
// workspaces, and the health of Elasticsearch and of the API.
//
// Each is a function of the Monocle, what was observed (the workloads from the cache, the
// last contract.Result of the operand worker) and the time: no client, no lister, no
// goroutine. A sync plans with them (the contract.Plan it hands the worker, the images and
// replicas it builds the workloads with) and turns their results into the status.
package day2
