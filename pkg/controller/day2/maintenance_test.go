package day2

import (
	"strings"
	"testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

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
