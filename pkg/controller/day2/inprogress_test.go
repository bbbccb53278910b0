package day2

import (
	"strings"
	"testing"
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

func TestRestoreOrUpgradeInProgress(t *testing.T) {
	restore := &monoclev1alpha1.RestoreSpec{Snapshot: "s1"}
	restored := func(snapshot string, phase monoclev1alpha1.RestorePhase) *monoclev1alpha1.RestoreStatus {
		return &monoclev1alpha1.RestoreStatus{Snapshot: snapshot, Phase: phase}
	}
	upgrade := func(phase monoclev1alpha1.UpgradePhase) *monoclev1alpha1.UpgradeStatus {
		return &monoclev1alpha1.UpgradeStatus{From: "1.10.0", To: "1.11.2", Phase: phase}
	}
	tests := map[string]struct {
		restore *monoclev1alpha1.RestoreSpec
		status  monoclev1alpha1.MonocleStatus
		want    string // a part of the message; "" for none
	}{
		"nothing":                         {},
		"a restore not started":           {restore: restore, want: "Restoring snapshot s1"},
		"a restore pending":               {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestorePending)}, want: "Restoring snapshot s1"},
		"a restore restoring":             {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestoreRestoring)}, want: "Elasticsearch is restoring snapshot s1"},
		"a restore succeeded":             {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestoreSucceeded)}},
		"a restore failed":                {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestoreFailed)}},
		"another snapshot after a failed": {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s0", monoclev1alpha1.RestoreFailed)}, want: "Restoring snapshot s1"},
		"an upgrade stopping the crawler": {status: monoclev1alpha1.MonocleStatus{Upgrade: upgrade(monoclev1alpha1.UpgradeStoppingCrawler)}, want: "Upgrading from 1.10.0 to 1.11.2: stopping the crawler"},
		"an upgrade blocked":              {status: monoclev1alpha1.MonocleStatus{Upgrade: upgrade(monoclev1alpha1.UpgradeBlocked)}, want: "The upgrade from 1.10.0 to 1.11.2 is stopped"},
		"an upgrade succeeded":            {status: monoclev1alpha1.MonocleStatus{Upgrade: upgrade(monoclev1alpha1.UpgradeSucceeded)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := &monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{Restore: tc.restore}, Status: tc.status}
			got := RestoreOrUpgradeInProgress(m, time.Now())
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("RestoreOrUpgradeInProgress = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckMaintenanceRequest(t *testing.T) {
	cfg, err := monocleconfig.Parse("workspaces:\n- name: demo\n  crawlers:\n  - name: gh\n    update_since: \"2024-01-01\"\n    provider:\n      github_organization: o\n")
	if err != nil {
		t.Fatal(err)
	}
	wipe := func(ws, crawler string) monoclev1alpha1.MaintenanceRequest {
		return monoclev1alpha1.MaintenanceRequest{Name: "r", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: ws, Crawler: crawler}
	}
	since := func(date string) monoclev1alpha1.MaintenanceRequest {
		r := wipe("demo", "gh")
		r.Operation, r.CommitDate = monoclev1alpha1.SetCrawlerCommitDate, date
		return r
	}
	tests := map[string]struct {
		r    monoclev1alpha1.MaintenanceRequest
		cfg  *monocleconfig.Config
		want string
	}{
		"runs":               {r: wipe("demo", "gh"), cfg: cfg},
		"no config yet":      {r: wipe("nope", "gh")},
		"unknown workspace":  {r: wipe("nope", "gh"), cfg: cfg, want: "config.yaml has no workspace nope (it has: [demo])"},
		"unknown crawler":    {r: wipe("demo", "gl"), cfg: cfg, want: "workspace demo has no crawler gl (it has: [gh])"},
		"a date":             {r: since("2023-01-01"), cfg: cfg},
		"a date not Monocle": {r: since("01/01/2023"), cfg: cfg, want: `commitDate "01/01/2023": `},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := CheckMaintenanceRequest(tc.r, tc.cfg)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("CheckMaintenanceRequest = %q, want %q", got, tc.want)
			}
		})
	}
}
