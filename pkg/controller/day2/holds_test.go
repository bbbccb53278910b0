package day2

import (
	"testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestPlanHolds: each reason stops its components and is named in the holds; the components
// stopped are the union of the reasons'; Hibernating follows the hibernation phase, not the
// components hibernation stops.
func TestPlanHolds(t *testing.T) {
	restore := func(phase monoclev1alpha1.RestorePhase) RestoreResult {
		return RestoreResult{Status: &monoclev1alpha1.RestoreStatus{Snapshot: "nightly", Phase: phase}}
	}
	hibernation := func(phase monoclev1alpha1.HibernationPhase, stopped resources.Stopped) HibernationStep {
		return HibernationStep{Stopped: stopped, Status: &monoclev1alpha1.HibernationStatus{Phase: phase}}
	}
	all := resources.Stopped{Crawler: true, API: true, Elastic: true}
	crawler := resources.Stopped{Crawler: true}
	apiAndCrawler := resources.Stopped{Crawler: true, API: true}
	tests := map[string]struct {
		h           HibernationStep
		restore     RestoreResult
		up          UpgradeStep
		maintenance bool
		want        Holds
	}{
		"nothing": {},
		"restore pending": {restore: restore(monoclev1alpha1.RestorePending),
			want: Holds{Stopped: apiAndCrawler, Restore: true}},
		"restore restoring": {restore: restore(monoclev1alpha1.RestoreRestoring),
			want: Holds{Stopped: apiAndCrawler, Restore: true}},
		"restore failed": {restore: restore(monoclev1alpha1.RestoreFailed),
			want: Holds{Stopped: apiAndCrawler, Restore: true}},
		"restore succeeded": {restore: restore(monoclev1alpha1.RestoreSucceeded)},
		"maintenance": {maintenance: true,
			want: Holds{Stopped: crawler, Maintenance: true}},
		"upgrade stops the crawler": {up: UpgradeStep{StopCrawler: true},
			want: Holds{Stopped: crawler, Upgrade: true}},
		"upgrade recreates the API": {up: UpgradeStep{APIRecreate: true, APIImage: "a", CrawlerImage: "c"}},
		"hibernating, the crawler first": {h: hibernation(monoclev1alpha1.HibernationHibernating, crawler),
			want: Holds{Stopped: crawler, Hibernation: crawler, Hibernating: true}},
		"hibernated": {h: hibernation(monoclev1alpha1.HibernationHibernated, all),
			want: Holds{Stopped: all, Hibernation: all, Hibernating: true}},
		"waking, the API and the crawler not started yet": {h: hibernation(monoclev1alpha1.HibernationWaking, apiAndCrawler),
			want: Holds{Stopped: apiAndCrawler, Hibernation: apiAndCrawler}},
		"waking, all started": {h: hibernation(monoclev1alpha1.HibernationWaking, resources.Stopped{})},
		"hibernation deferred": {h: HibernationStep{}, restore: restore(monoclev1alpha1.RestorePending),
			want: Holds{Stopped: apiAndCrawler, Restore: true}},
		"maintenance and upgrade": {up: UpgradeStep{StopCrawler: true}, maintenance: true,
			want: Holds{Stopped: crawler, Maintenance: true, Upgrade: true}},
		"maintenance while hibernated": {h: hibernation(monoclev1alpha1.HibernationHibernated, all), maintenance: true,
			want: Holds{Stopped: all, Hibernation: all, Hibernating: true, Maintenance: true}},
		"failed restore while waking": {h: hibernation(monoclev1alpha1.HibernationWaking, resources.Stopped{}), restore: restore(monoclev1alpha1.RestoreFailed),
			want: Holds{Stopped: apiAndCrawler, Restore: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PlanHolds(tc.h, tc.restore, tc.up, tc.maintenance); got != tc.want {
				t.Errorf("holds %+v, want %+v", got, tc.want)
			}
		})
	}
}
