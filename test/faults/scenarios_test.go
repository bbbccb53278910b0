package faults

import (
	"testing"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// The scenarios run in this order, on one cluster: later ones start with the Monocles of the
// earlier ones still there, and the invariants cover all of them.

// TestOperatorCrashes is scenario 1 (testOperatorCrashes).
func TestOperatorCrashes(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testOperatorCrashes(t)
}

// TestLeaderChurn is scenario 2 (testLeaderChurn).
func TestLeaderChurn(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testLeaderChurn(t)
}

// TestControlPlaneRestarts is scenario 3 (testControlPlaneRestarts).
func TestControlPlaneRestarts(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testControlPlaneRestarts(t)
}

// TestOwnedObjectDrift is scenario 4 (testOwnedObjectDrift).
func TestOwnedObjectDrift(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testOwnedObjectDrift(t)
}

// TestConflicts is scenario 5 (testConflicts).
func TestConflicts(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testConflicts(t)
}

// TestDeletions is scenario 6 (testDeletions).
func TestDeletions(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testDeletions(t)
}

// TestAdoptionCrashes is scenario 7 (testAdoptionCrashes).
func TestAdoptionCrashes(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testAdoptionCrashes(t)
}

// TestRestoreCrashes is scenario 8 (testRestoreCrashes).
func TestRestoreCrashes(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testRestoreCrashes(t)
}

// TestUpgradeCrashes is scenario 9 (testUpgradeCrashes).
func TestUpgradeCrashes(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testUpgradeCrashes(t)
}

// TestHibernationCrashes is scenario 10 (testHibernationCrashes).
func TestHibernationCrashes(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testHibernationCrashes(t)
}

// TestSecuritySwitchCrashes is scenario 11 (testSecuritySwitchCrashes).
func TestSecuritySwitchCrashes(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testSecuritySwitchCrashes(t)
}

// TestRollingUpdateAcrossReleases is scenario 12 (testRollingUpdateAcrossReleases).
func TestRollingUpdateAcrossReleases(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testRollingUpdateAcrossReleases(t)
}

// TestFleetRolloutLeaderKill is scenario 13 (testFleetRolloutLeaderKill).
func TestFleetRolloutLeaderKill(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testFleetRolloutLeaderKill(t)
}

// TestFleetRolloutHalt is scenario 14 (testFleetRolloutHalt).
func TestFleetRolloutHalt(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	testFleetRolloutHalt(t)
}
