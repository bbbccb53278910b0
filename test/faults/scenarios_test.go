package faults

import "testing"

// The scenarios run in this order, on one cluster: later ones start with the Monocles of the
// earlier ones still there, and the invariants cover all of them.

// TestOperatorCrashes is scenario 1 (testOperatorCrashes).
func TestOperatorCrashes(t *testing.T) {
	needCluster(t)
	testOperatorCrashes(t)
}

// TestLeaderChurn is scenario 2 (testLeaderChurn).
func TestLeaderChurn(t *testing.T) {
	needCluster(t)
	testLeaderChurn(t)
}

// TestControlPlaneRestarts is scenario 3 (testControlPlaneRestarts).
func TestControlPlaneRestarts(t *testing.T) {
	needCluster(t)
	testControlPlaneRestarts(t)
}

// TestOwnedObjectDrift is scenario 4 (testOwnedObjectDrift).
func TestOwnedObjectDrift(t *testing.T) {
	needCluster(t)
	testOwnedObjectDrift(t)
}

// TestConflicts is scenario 5 (testConflicts).
func TestConflicts(t *testing.T) {
	needCluster(t)
	testConflicts(t)
}

// TestDeletions is scenario 6 (testDeletions).
func TestDeletions(t *testing.T) {
	needCluster(t)
	testDeletions(t)
}

// TestAdoptionCrashes is scenario 7 (testAdoptionCrashes).
func TestAdoptionCrashes(t *testing.T) {
	needCluster(t)
	testAdoptionCrashes(t)
}
