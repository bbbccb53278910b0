package day2

import (
	"fmt"
	"slices"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// CheckMaintenanceRequest returns why maintenance request r cannot run with the config in
// force cfg, or "" when it can (also when cfg is nil: nothing is known yet). A request names
// a workspace of config.yaml and a crawler of that workspace; a SetCrawlerCommitDate request
// has a date Monocle reads (monocleconfig.ValidateDate). The controller fails a request with
// this message, and the kubectl plugin refuses one with it before writing.
func CheckMaintenanceRequest(r monoclev1alpha1.MaintenanceRequest, cfg *monocleconfig.Config) string {
	if cfg == nil {
		return ""
	}
	var workspaces []string
	for _, w := range cfg.Workspaces {
		workspaces = append(workspaces, w.Name)
		if w.Name != r.Workspace {
			continue
		}
		var crawlers []string
		for _, c := range w.Crawlers {
			if c.Name == r.Crawler {
				if r.Operation == monoclev1alpha1.SetCrawlerCommitDate {
					if err := monocleconfig.ValidateDate(r.CommitDate); err != nil {
						return fmt.Sprintf("commitDate %q: %v", r.CommitDate, err)
					}
				}
				return ""
			}
			crawlers = append(crawlers, c.Name)
		}
		return fmt.Sprintf("workspace %s has no crawler %s (it has: %v)", r.Workspace, r.Crawler, crawlers)
	}
	return fmt.Sprintf("config.yaml has no workspace %s (it has: %v)", r.Workspace, workspaces)
}

// MaintenancePlan is what spec.maintenance asks of one sync, decided before the crawler is
// ensured: which requests are still to run, which are refused, and whether the crawler must
// be stopped.
type MaintenancePlan struct {
	// Requests are spec.maintenance's requests in spec order, then the automatic ones.
	Requests []monoclev1alpha1.MaintenanceRequest
	// Refused maps a request name to why it cannot run (an unknown workspace or crawler, a
	// date Monocle does not read).
	Refused map[string]string
	// StopCrawler is true while a WipeCrawlerData request, or an automatic one, has not
	// finished.
	StopCrawler bool
	// Automatic are the requests the operator makes itself: those of earlier syncs not
	// finished (from the status), and those for crawlers whose update_since moved earlier.
	Automatic map[string]bool
	// Crawlers are the crawlers of the config in force, for status.crawlers.
	Crawlers []monoclev1alpha1.CrawlerStatus
	// Moved are the crawlers whose update_since moved earlier in this sync, for events.
	Moved []MovedSince
}

// MovedSince is a crawler whose update_since moved earlier, and the request made for it.
type MovedSince struct {
	// From and To are the crawler's update_since before and after the move (YYYY-MM-DD or
	// a time Monocle reads).
	From, To string
	// Request is the automatic SetCrawlerCommitDate request made for the move.
	Request monoclev1alpha1.MaintenanceRequest
}

// maxAutomatic bounds the automatic requests kept in the status (finished ones go first).
const maxAutomatic = 16

// PlanMaintenance checks m's maintenance requests against the config in force (cfg, nil when
// none is valid): a request names a workspace and a crawler of it, and a date Monocle
// reads. Requests already finished (in status, or their Job in the cache: finished reports
// whether the Job of that name m controls has finished) are left alone.
//
// It also makes the automatic requests: Monocle's crawler reads update_since only on its first
// run and then resumes from the position it stored (ensureCrawlerMetadata in
// src/Monocle/Backend/Index.hs at 1.11.2; change-metrics/monocle#279, where users deleted
// their index to crawl again), so when a crawler's update_since moves earlier than the one it
// was last started with (status.crawlers), a SetCrawlerCommitDate request to the new date runs
// with the crawler stopped, before it starts with the new config.
func PlanMaintenance(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config, finished func(jobName string) bool) MaintenancePlan {
	plan := MaintenancePlan{Requests: append([]monoclev1alpha1.MaintenanceRequest(nil), m.Spec.Maintenance...),
		Refused: map[string]string{}, Automatic: map[string]bool{}, Crawlers: m.Status.Crawlers}
	// The automatic requests of earlier syncs, newest last; the oldest finished ones are
	// dropped beyond maxAutomatic.
	var earlier []monoclev1alpha1.MaintenanceRequest
	for _, s := range m.Status.Maintenance {
		if s.Automatic != nil {
			earlier = append(earlier, *s.Automatic)
		}
	}
	if cfg != nil {
		plan.Crawlers = nil
		last := map[[2]string]string{}
		for _, cr := range m.Status.Crawlers {
			last[[2]string{cr.Workspace, cr.Name}] = cr.UpdateSince
		}
		for _, w := range cfg.Workspaces {
			for _, cr := range w.Crawlers {
				plan.Crawlers = append(plan.Crawlers, monoclev1alpha1.CrawlerStatus{Workspace: w.Name, Name: cr.Name, UpdateSince: cr.UpdateSince})
				from, ok := last[[2]string{w.Name, cr.Name}]
				if !ok || !sinceMovedEarlier(from, cr.UpdateSince) {
					continue
				}
				r := monoclev1alpha1.MaintenanceRequest{
					Name:      "since-" + resources.Hash([]string{w.Name, cr.Name, cr.UpdateSince, from})[:8],
					Operation: monoclev1alpha1.SetCrawlerCommitDate, Workspace: w.Name, Crawler: cr.Name, CommitDate: cr.UpdateSince,
				}
				earlier = append(earlier, r)
				plan.Moved = append(plan.Moved, MovedSince{From: from, To: cr.UpdateSince, Request: r})
			}
		}
	}
	for len(earlier) > maxAutomatic {
		i := slices.IndexFunc(earlier, func(r monoclev1alpha1.MaintenanceRequest) bool {
			s := MaintenanceStatus(m, r.Name)
			return s != nil && FinishedPhase(s.Phase)
		})
		if i < 0 {
			i = 0
		}
		earlier = slices.Delete(earlier, i, i+1)
	}
	for _, r := range earlier {
		if !slices.ContainsFunc(plan.Requests, func(s monoclev1alpha1.MaintenanceRequest) bool { return s.Name == r.Name }) {
			plan.Requests = append(plan.Requests, r)
			plan.Automatic[r.Name] = true
		}
	}
	for _, r := range plan.Requests {
		s := MaintenanceStatus(m, r.Name)
		if s != nil && FinishedPhase(s.Phase) {
			continue
		}
		if s != nil && finished(s.Name) {
			continue
		}
		if why := CheckMaintenanceRequest(r, cfg); why != "" {
			plan.Refused[r.Name] = why
			continue
		}
		if r.Operation == monoclev1alpha1.WipeCrawlerData || plan.Automatic[r.Name] {
			plan.StopCrawler = true
		}
	}
	return plan
}

// sinceMovedEarlier reports whether update_since to is an earlier date than from; dates that do
// not parse never count.
func sinceMovedEarlier(from, to string) bool {
	f, err := monocleconfig.ParseDate(from)
	if err != nil {
		return false
	}
	t, err := monocleconfig.ParseDate(to)
	return err == nil && t.Before(f)
}

// MaintenanceStatus returns a copy of m's status.maintenance entry of request (by request
// name), or nil when it has none.
func MaintenanceStatus(m *monoclev1alpha1.Monocle, request string) *monoclev1alpha1.MaintenanceJobStatus {
	i := slices.IndexFunc(m.Status.Maintenance, func(s monoclev1alpha1.MaintenanceJobStatus) bool { return s.Request == request })
	if i < 0 {
		return nil
	}
	return m.Status.Maintenance[i].DeepCopy()
}

// FinishedPhase reports whether p is a phase a Job ends in: Succeeded or Failed.
func FinishedPhase(p monoclev1alpha1.JobPhase) bool {
	return p == monoclev1alpha1.JobSucceeded || p == monoclev1alpha1.JobFailed
}
