package day2

import (
	"fmt"
	"slices"
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

// TestPlanMaintenance: which requests of the spec and of the status run, which are refused,
// whether the crawler stops for them, and the automatic request of a crawler whose
// update_since moved earlier than the one it last started with.
func TestPlanMaintenance(t *testing.T) {
	cfg, err := monocleconfig.Parse("workspaces:\n- name: demo\n  crawlers:\n  - name: gh\n    update_since: \"2024-01-01\"\n    provider:\n      github_organization: o\n")
	if err != nil {
		t.Fatal(err)
	}
	wipe := monoclev1alpha1.MaintenanceRequest{Name: "wipe", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gh"}
	since := monoclev1alpha1.MaintenanceRequest{Name: "since", Operation: monoclev1alpha1.SetCrawlerCommitDate, Workspace: "demo", Crawler: "gh", CommitDate: "2023-01-01"}
	unknown := monoclev1alpha1.MaintenanceRequest{Name: "unknown", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "nope", Crawler: "gh"}
	status := func(r string, p monoclev1alpha1.JobPhase) monoclev1alpha1.MaintenanceJobStatus {
		return monoclev1alpha1.MaintenanceJobStatus{Request: r, Name: "job-" + r, Phase: p}
	}
	crawledSince := func(date string) []monoclev1alpha1.CrawlerStatus {
		return []monoclev1alpha1.CrawlerStatus{{Workspace: "demo", Name: "gh", UpdateSince: date}}
	}
	tests := map[string]struct {
		spec     []monoclev1alpha1.MaintenanceRequest
		status   []monoclev1alpha1.MaintenanceJobStatus
		crawlers []monoclev1alpha1.CrawlerStatus
		cfg      *monocleconfig.Config
		// finished are the Jobs the cache has finished.
		finished []string
		refused  []string
		stop     bool
		// moved is the date update_since moved from, "" when it did not move earlier.
		moved string
	}{
		"wipe stops the crawler":         {spec: []monoclev1alpha1.MaintenanceRequest{wipe}, cfg: cfg, stop: true},
		"a commit date does not":         {spec: []monoclev1alpha1.MaintenanceRequest{since}, cfg: cfg},
		"unknown workspace refused":      {spec: []monoclev1alpha1.MaintenanceRequest{unknown}, cfg: cfg, refused: []string{"unknown"}},
		"nothing refused without config": {spec: []monoclev1alpha1.MaintenanceRequest{unknown}, stop: true},
		"running":                        {spec: []monoclev1alpha1.MaintenanceRequest{wipe}, status: []monoclev1alpha1.MaintenanceJobStatus{status("wipe", monoclev1alpha1.JobRunning)}, cfg: cfg, stop: true},
		"finished in the status":         {spec: []monoclev1alpha1.MaintenanceRequest{wipe}, status: []monoclev1alpha1.MaintenanceJobStatus{status("wipe", monoclev1alpha1.JobSucceeded)}, cfg: cfg},
		"finished in the cache": {spec: []monoclev1alpha1.MaintenanceRequest{wipe}, status: []monoclev1alpha1.MaintenanceJobStatus{status("wipe", monoclev1alpha1.JobRunning)},
			cfg: cfg, finished: []string{"job-wipe"}},
		"update_since moved earlier": {crawlers: crawledSince("2025-01-01"), cfg: cfg, stop: true, moved: "2025-01-01"},
		"update_since moved later":   {crawlers: crawledSince("2023-06-01"), cfg: cfg},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := &monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{Maintenance: tc.spec},
				Status: monoclev1alpha1.MonocleStatus{Maintenance: tc.status, Crawlers: tc.crawlers}}
			plan := PlanMaintenance(m, tc.cfg, func(job string) bool { return slices.Contains(tc.finished, job) })
			var refused []string
			for r := range plan.Refused {
				refused = append(refused, r)
			}
			if !slices.Equal(refused, tc.refused) || plan.StopCrawler != tc.stop {
				t.Errorf("refused %v, stop the crawler %v; want %v, %v", refused, plan.StopCrawler, tc.refused, tc.stop)
			}
			if tc.cfg != nil && !slices.Equal(plan.Crawlers, crawledSince("2024-01-01")) {
				t.Errorf("crawlers %+v, want those of the config", plan.Crawlers)
			}
			if tc.moved == "" {
				if len(plan.Moved) != 0 || len(plan.Automatic) != 0 {
					t.Errorf("moved %+v, automatic %v; want none", plan.Moved, plan.Automatic)
				}
				return
			}
			if len(plan.Moved) != 1 || plan.Moved[0].From != tc.moved || plan.Moved[0].To != "2024-01-01" {
				t.Fatalf("moved %+v, want from %s to 2024-01-01", plan.Moved, tc.moved)
			}
			r := plan.Moved[0].Request
			if r.Operation != monoclev1alpha1.SetCrawlerCommitDate || r.CommitDate != "2024-01-01" || !plan.Automatic[r.Name] ||
				!slices.Contains(plan.Requests, r) {
				t.Errorf("automatic request %+v (automatic %v, requests %+v), want a SetCrawlerCommitDate to 2024-01-01 among the requests", r, plan.Automatic, plan.Requests)
			}
		})
	}
}

// TestPlanMaintenanceKeepsTheNewestAutomatic: beyond maxAutomatic, the status's automatic
// requests lose a finished one first.
func TestPlanMaintenanceKeepsTheNewestAutomatic(t *testing.T) {
	m := &monoclev1alpha1.Monocle{}
	for i := range maxAutomatic + 1 {
		r := monoclev1alpha1.MaintenanceRequest{Name: fmt.Sprintf("since-%d", i), Operation: monoclev1alpha1.SetCrawlerCommitDate,
			Workspace: "demo", Crawler: "gh", CommitDate: "2023-01-01"}
		phase := monoclev1alpha1.JobRunning
		if i == 1 {
			phase = monoclev1alpha1.JobSucceeded
		}
		m.Status.Maintenance = append(m.Status.Maintenance, monoclev1alpha1.MaintenanceJobStatus{Request: r.Name, Name: "job-" + r.Name, Phase: phase, Automatic: &r})
	}
	plan := PlanMaintenance(m, nil, func(string) bool { return false })
	if len(plan.Requests) != maxAutomatic || len(plan.Automatic) != maxAutomatic || plan.Automatic["since-1"] {
		t.Errorf("requests %d, automatic %v; want %d, without the finished since-1", len(plan.Requests), plan.Automatic, maxAutomatic)
	}
}
