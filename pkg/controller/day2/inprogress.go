package day2

import (
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// RestoreOrUpgradeInProgress returns, when a restore or a Monocle upgrade of m is under way,
// the message of its condition (Restored or Upgraded, as the operator words it), else "".
// A restore is under way from spec.restore until status.restore reports it Succeeded or
// Failed for that snapshot; an upgrade while status.upgrade is in any phase but Succeeded
// (Blocked included: it goes on once unblocked). Both stop and start the API and the crawler
// in steps of their own, so hibernation waits for them, and the kubectl plugin refuses to
// ask for it meanwhile.
func RestoreOrUpgradeInProgress(m *monoclev1alpha1.Monocle, now time.Time) string {
	if RestoreWanted(m) {
		if st := m.Status.Restore; st == nil || st.Snapshot != m.Spec.Restore.Snapshot || st.Phase != monoclev1alpha1.RestoreFailed {
			return RestoreStatusAfter(m, nil, now).Condition.Message
		}
	}
	if st := m.Status.Upgrade; st != nil && st.Phase != monoclev1alpha1.UpgradeSucceeded {
		return UpgradingCondition(st).Message
	}
	return ""
}
