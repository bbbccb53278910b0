package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// maintenancePlan is what spec.maintenance asks of one sync, decided before the crawler is
// ensured: which requests are still to run, which are refused, and whether the crawler must
// be stopped.
type maintenancePlan struct {
	requests []monoclev1alpha1.MaintenanceRequest
	// refused maps a request name to why it cannot run (an unknown workspace or crawler, a
	// date Monocle does not read).
	refused map[string]string
	// stopCrawler is true while a WipeCrawlerData request, or an automatic one, has not
	// finished.
	stopCrawler bool
	// automatic are the requests the operator makes itself: those of earlier syncs not
	// finished (from the status), and those for crawlers whose update_since moved earlier.
	automatic map[string]bool
	// crawlers are the crawlers of the config in force, for status.crawlers.
	crawlers []monoclev1alpha1.CrawlerStatus
	// moved are the crawlers whose update_since moved earlier in this sync, for events.
	moved []movedSince
	// elastic is how the Jobs reach Elasticsearch.
	elastic resources.ElasticAccess
}

// movedSince is a crawler whose update_since moved earlier, and the request made for it.
type movedSince struct {
	from, to string
	request  monoclev1alpha1.MaintenanceRequest
}

// maxAutomatic bounds the automatic requests kept in the status (finished ones go first).
const maxAutomatic = 16

// planMaintenance checks m's maintenance requests against the config in force (cfg, nil when
// none is valid): a request names a workspace and a crawler of it, and a date Monocle
// reads. Requests already finished (in status, or their Job in the cache) are left alone.
//
// It also makes the automatic requests: Monocle's crawler reads update_since only on its first
// run and then resumes from the position it stored (ensureCrawlerMetadata in
// src/Monocle/Backend/Index.hs at 1.11.2; change-metrics/monocle#279, where users deleted
// their index to crawl again), so when a crawler's update_since moves earlier than the one it
// was last started with (status.crawlers), a SetCrawlerCommitDate request to the new date runs
// with the crawler stopped, before it starts with the new config.
func (c *Controller) planMaintenance(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config) maintenancePlan {
	plan := maintenancePlan{requests: append([]monoclev1alpha1.MaintenanceRequest(nil), m.Spec.Maintenance...),
		refused: map[string]string{}, automatic: map[string]bool{}, crawlers: m.Status.Crawlers}
	// The automatic requests of earlier syncs, newest last; the oldest finished ones are
	// dropped beyond maxAutomatic.
	var earlier []monoclev1alpha1.MaintenanceRequest
	for _, s := range m.Status.Maintenance {
		if s.Automatic != nil {
			earlier = append(earlier, *s.Automatic)
		}
	}
	if cfg != nil {
		plan.crawlers = nil
		last := map[[2]string]string{}
		for _, cr := range m.Status.Crawlers {
			last[[2]string{cr.Workspace, cr.Name}] = cr.UpdateSince
		}
		for _, w := range cfg.Workspaces {
			for _, cr := range w.Crawlers {
				plan.crawlers = append(plan.crawlers, monoclev1alpha1.CrawlerStatus{Workspace: w.Name, Name: cr.Name, UpdateSince: cr.UpdateSince})
				from, ok := last[[2]string{w.Name, cr.Name}]
				if !ok || !sinceMovedEarlier(from, cr.UpdateSince) {
					continue
				}
				r := monoclev1alpha1.MaintenanceRequest{
					Name:      "since-" + resources.Hash([]string{w.Name, cr.Name, cr.UpdateSince, from})[:8],
					Operation: monoclev1alpha1.SetCrawlerCommitDate, Workspace: w.Name, Crawler: cr.Name, CommitDate: cr.UpdateSince,
				}
				earlier = append(earlier, r)
				plan.moved = append(plan.moved, movedSince{from: from, to: cr.UpdateSince, request: r})
			}
		}
	}
	for len(earlier) > maxAutomatic {
		i := slices.IndexFunc(earlier, func(r monoclev1alpha1.MaintenanceRequest) bool {
			s := maintenanceStatus(m, r.Name)
			return s != nil && finishedPhase(s.Phase)
		})
		if i < 0 {
			i = 0
		}
		earlier = slices.Delete(earlier, i, i+1)
	}
	for _, r := range earlier {
		if !slices.ContainsFunc(plan.requests, func(s monoclev1alpha1.MaintenanceRequest) bool { return s.Name == r.Name }) {
			plan.requests = append(plan.requests, r)
			plan.automatic[r.Name] = true
		}
	}
	for _, r := range plan.requests {
		s := maintenanceStatus(m, r.Name)
		if s != nil && finishedPhase(s.Phase) {
			continue
		}
		if s != nil {
			if job, err := c.jobs.Get(m.Namespace, s.Name); err == nil && owned.IsControlledBy(job, m) && finished(job) != "" {
				continue
			}
		}
		if why := day2.CheckMaintenanceRequest(r, cfg); why != "" {
			plan.refused[r.Name] = why
			continue
		}
		if r.Operation == monoclev1alpha1.WipeCrawlerData || plan.automatic[r.Name] {
			plan.stopCrawler = true
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

func maintenanceStatus(m *monoclev1alpha1.Monocle, request string) *monoclev1alpha1.MaintenanceJobStatus {
	i := slices.IndexFunc(m.Status.Maintenance, func(s monoclev1alpha1.MaintenanceJobStatus) bool { return s.Request == request })
	if i < 0 {
		return nil
	}
	return m.Status.Maintenance[i].DeepCopy()
}

func finishedPhase(p monoclev1alpha1.JobPhase) bool {
	return p == monoclev1alpha1.JobSucceeded || p == monoclev1alpha1.JobFailed
}

// ensureMaintenance runs the plan's requests, one Job at a time in spec order, and returns
// their statuses (those of requests no longer in the spec are dropped). A request waits while
// another maintenance or update-idents Job runs, while no valid config is in force, and, to
// wipe data, until the crawler has stopped (crawler, the Deployment as this sync left it).
// A refused request fails at once, with a Warning event.
func (c *Controller) ensureMaintenance(ctx context.Context, m *monoclev1alpha1.Monocle, plan maintenancePlan, configHash string,
	crawler *appsv1.Deployment, identsRunning bool) ([]monoclev1alpha1.MaintenanceJobStatus, error) {
	var out []monoclev1alpha1.MaintenanceJobStatus
	busy := identsRunning
	for _, r := range plan.requests {
		if s := maintenanceStatus(m, r.Name); s != nil && (s.Phase == monoclev1alpha1.JobRunning || s.Phase == monoclev1alpha1.JobPending) {
			busy = busy || s.Phase == monoclev1alpha1.JobRunning
		}
	}
	var errs []error
	for _, r := range plan.requests {
		st := maintenanceStatus(m, r.Name)
		if st == nil {
			st = &monoclev1alpha1.MaintenanceJobStatus{Request: r.Name, Name: resources.MaintenanceJobName(m, r.Name), Phase: monoclev1alpha1.JobPending}
		}
		if plan.automatic[r.Name] {
			st.Automatic = r.DeepCopy()
		}
		st, err := c.ensureRequest(ctx, m, r, st, plan, configHash, crawler, &busy)
		if err != nil {
			errs = append(errs, err)
		}
		out = append(out, *st)
	}
	return out, errors.Join(errs...)
}

// ensureRequest advances one request; busy says a Job runs, and is set when this one starts.
func (c *Controller) ensureRequest(ctx context.Context, m *monoclev1alpha1.Monocle, r monoclev1alpha1.MaintenanceRequest,
	st *monoclev1alpha1.MaintenanceJobStatus, plan maintenancePlan, configHash string, crawler *appsv1.Deployment, busy *bool) (*monoclev1alpha1.MaintenanceJobStatus, error) {
	if finishedPhase(st.Phase) {
		return st, nil
	}
	if why, refused := plan.refused[r.Name]; refused {
		st.Phase, st.Message = monoclev1alpha1.JobFailed, "Refused: "+why
		return st, nil
	}
	if tracked, known, err := c.trackJob(ctx, m, st); known || err != nil {
		return tracked, err
	}
	switch {
	case *busy:
		st.Message = "Waiting for the running maintenance or update-idents Job to finish"
		return st, nil
	case configHash == "":
		st.Message = "Waiting for a valid config"
		return st, nil
	case r.Operation == monoclev1alpha1.WipeCrawlerData && crawler != nil &&
		(ptr.Deref(crawler.Spec.Replicas, 1) > 0 || crawler.Status.Replicas > 0):
		st.Message = "Waiting for the crawler to stop"
		return st, nil
	}
	created, err := c.kubeclientset.BatchV1().Jobs(m.Namespace).Create(ctx, resources.NewMaintenanceJob(m, r, configHash, plan.elastic),
		metav1.CreateOptions{FieldManager: ControllerName})
	if err != nil {
		return st, fmt.Errorf("creating Job %s: %w", st.Name, err)
	}
	*busy = true
	klog.FromContext(ctx).V(2).Info("Created object", "kind", "Job", "object", klog.KObj(created))
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created Job %s to run %s", created.Name, describeRequest(r))
	return jobStatus(st, created), nil
}

// describeRequest names a request in events: "WipeCrawlerData of crawler gh in workspace demo".
func describeRequest(r monoclev1alpha1.MaintenanceRequest) string {
	return fmt.Sprintf("%s of crawler %s in workspace %s", r.Operation, r.Crawler, r.Workspace)
}
