package controller

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// ensureJobs is the phase of the maintenance Jobs: update-idents after a config change, and
// the janitor runs spec.maintenance and the automatic requests ask for. No Job runs while a
// restore is under way, nor while hibernation stops the Monocle (they start once it
// wakes). It sets IdentsUpdated and Paused, and status.updateIdents and status.maintenance.
func (c *Controller) ensureJobs(ctx context.Context, st *syncState, f foundation, w workloads) {
	m := st.m
	if f.config.valid && f.configReady() && !w.holds.Restore {
		idents, err := c.ensureUpdateIdents(ctx, m, f.configHash, st.runningAPI(w.holds), st.elasticAccess(nil, nil))
		st.fail(err)
		st.status.UpdateIdents = idents
	}
	identsRunning := st.status.UpdateIdents != nil && st.status.UpdateIdents.Phase == monoclev1alpha1.JobRunning
	if !w.holds.Restore && !w.holds.Hibernating {
		for _, mv := range w.maintenance.Moved {
			// Told with the status that carries the automatic request.
			st.event(corev1.EventTypeNormal, reasons.UpdateSinceMovedEarlier, fmt.Sprintf(
				"update_since of crawler %s in workspace %s moved from %s to %s: Monocle's crawler would resume from its stored position, so request %s sets its commit date before it restarts",
				mv.Request.Crawler, mv.Request.Workspace, mv.From, mv.To, mv.Request.Name))
		}
		maintenance, err := c.ensureMaintenance(ctx, m, w.maintenance, st.elasticAccess(nil, nil), f.configHash, st.crawler, identsRunning)
		st.fail(err)
		st.status.Maintenance = nil
		for _, s := range maintenance {
			st.status.Maintenance = append(st.status.Maintenance, *s.DeepCopy())
		}
	}
	st.setCondition(identsCondition(st.status.UpdateIdents))
	st.setCondition(metav1.Condition{
		Type: monoclev1alpha1.ConditionPaused, Status: metav1.ConditionFalse, Reason: reasons.NotPaused,
		Message: "The operator reconciles this Monocle" + day2.AutoPilotMessage(m),
	})
}

// ensureUpdateIdents runs `monocle janitor update-idents` once for each config that replaces
// an earlier one, and returns the status of the last such Job. A new Monocle needs none: its
// indices hold no data yet. Jobs run one at a time per Monocle; a failed Job is reported and
// not started again (the next config change runs a new one). applied is the hash of the
// config the previous sync left in the ConfigMap (status.configHash).
//
// The Job is created only once api, the API Deployment as this sync left it, runs the new
// config with a ready pod: Monocle's API creates a new workspace's index at start (ensureIndex
// in src/Monocle/Backend/Index.hs, called from run' in src/Monocle/Main.hs at 1.11.2), and the
// janitor fails on a workspace whose index does not exist yet. e is how the Job reaches
// Elasticsearch.
func (c *Controller) ensureUpdateIdents(ctx context.Context, m *monoclev1alpha1.Monocle, configHash string, api *appsv1.Deployment,
	e resources.ElasticAccess) (*monoclev1alpha1.MaintenanceJobStatus, error) {
	applied := m.Status.ConfigHash
	want := m.Status.UpdateIdents.DeepCopy()
	if applied != "" && applied != configHash {
		want = &monoclev1alpha1.MaintenanceJobStatus{
			Name: resources.UpdateIdentsJobName(m, configHash), ConfigHash: configHash, Phase: monoclev1alpha1.JobPending,
		}
	}
	if want == nil || want.Phase == monoclev1alpha1.JobSucceeded || want.Phase == monoclev1alpha1.JobFailed {
		return want, nil
	}

	if tracked, known, err := c.trackJob(ctx, m, want); known || err != nil {
		return tracked, err
	}

	if running, err := c.activeUpdateIdentsJob(m); err != nil || running != "" {
		if running != "" {
			want.Message = fmt.Sprintf("Waiting for Job %s to finish", running)
		}
		return want, err
	}
	if !runsConfig(api, configHash) {
		want.Message = "Waiting for the API to run the new config: it creates the index of a new workspace at start, which update-idents needs"
		return want, nil
	}
	created, err := c.kubeclientset.BatchV1().Jobs(m.Namespace).Create(ctx,
		resources.NewUpdateIdentsJob(m, configHash, e), metav1.CreateOptions{FieldManager: ControllerName})
	if err != nil {
		return want, fmt.Errorf("creating Job %s: %w", want.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Created object", "kind", "Job", "object", klog.KObj(created))
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created Job %s to run update-idents for the new config", created.Name)
	return jobStatus(want, created), nil
}

// ensureMaintenance runs the plan's requests, one Job at a time in spec order, and returns
// their statuses (those of requests no longer in the spec are dropped); e is how the Jobs
// reach Elasticsearch. A request waits while
// another maintenance or update-idents Job runs, while no valid config is in force, and, to
// wipe data, until the crawler has stopped (crawler, the Deployment as this sync left it).
// A refused request fails at once, with a Warning event.
func (c *Controller) ensureMaintenance(ctx context.Context, m *monoclev1alpha1.Monocle, plan day2.MaintenancePlan, e resources.ElasticAccess,
	configHash string, crawler *appsv1.Deployment, identsRunning bool) ([]monoclev1alpha1.MaintenanceJobStatus, error) {
	var out []monoclev1alpha1.MaintenanceJobStatus
	busy := identsRunning
	for _, r := range plan.Requests {
		if s := day2.MaintenanceStatus(m, r.Name); s != nil && (s.Phase == monoclev1alpha1.JobRunning || s.Phase == monoclev1alpha1.JobPending) {
			busy = busy || s.Phase == monoclev1alpha1.JobRunning
		}
	}
	var errs []error
	for _, r := range plan.Requests {
		st := day2.MaintenanceStatus(m, r.Name)
		if st == nil {
			st = &monoclev1alpha1.MaintenanceJobStatus{Request: r.Name, Name: resources.MaintenanceJobName(m, r.Name), Phase: monoclev1alpha1.JobPending}
		}
		if plan.Automatic[r.Name] {
			st.Automatic = r.DeepCopy()
		}
		st, err := c.ensureRequest(ctx, m, r, st, plan, e, configHash, crawler, &busy)
		if err != nil {
			errs = append(errs, err)
		}
		out = append(out, *st)
	}
	return out, errors.Join(errs...)
}

// ensureRequest advances one request; busy says a Job runs, and is set when this one starts.
func (c *Controller) ensureRequest(ctx context.Context, m *monoclev1alpha1.Monocle, r monoclev1alpha1.MaintenanceRequest,
	st *monoclev1alpha1.MaintenanceJobStatus, plan day2.MaintenancePlan, e resources.ElasticAccess, configHash string, crawler *appsv1.Deployment,
	busy *bool) (*monoclev1alpha1.MaintenanceJobStatus, error) {
	if day2.FinishedPhase(st.Phase) {
		return st, nil
	}
	if why, refused := plan.Refused[r.Name]; refused {
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
	created, err := c.kubeclientset.BatchV1().Jobs(m.Namespace).Create(ctx, resources.NewMaintenanceJob(m, r, configHash, e),
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

// jobFinished returns, for day2.PlanMaintenance, whether the Job of a name in m's namespace
// is controlled by m and has finished, in the cache.
func (c *Controller) jobFinished(m *monoclev1alpha1.Monocle) func(jobName string) bool {
	return func(jobName string) bool {
		job, err := c.jobs.Get(m.Namespace, jobName)
		return err == nil && owned.IsControlledBy(job, m) && finished(job) != ""
	}
}

// trackJob follows the Job of a maintenance status st that has not finished: known is true
// when the Job exists (out is then its status) or is gone for good (out says Failed), false
// when it is yet to be created. It reads the cache; a Running Job the cache does not have is
// asked of the API server before it is called deleted, since the cache may not have seen a
// Job created a moment ago (only a user deletes a running Job: the TTL controller waits for
// it to finish). A Job of that name m does not control is a name conflict.
func (c *Controller) trackJob(ctx context.Context, m *monoclev1alpha1.Monocle, st *monoclev1alpha1.MaintenanceJobStatus) (out *monoclev1alpha1.MaintenanceJobStatus, known bool, err error) {
	job, err := c.jobs.Get(m.Namespace, st.Name)
	switch {
	case err == nil && owned.IsControlledBy(job, m):
		return jobStatus(st, job), true, nil
	case err == nil:
		return st, true, owned.NameConflict(c.recorder, m, "Job", st.Name)
	case !apierrors.IsNotFound(err):
		return st, true, fmt.Errorf("reading Job %s from the cache: %w", st.Name, err)
	case st.Phase != monoclev1alpha1.JobRunning:
		return st, false, nil
	}
	live, err := c.kubeclientset.BatchV1().Jobs(m.Namespace).Get(ctx, st.Name, metav1.GetOptions{})
	switch {
	case err == nil && owned.IsControlledBy(live, m):
		return jobStatus(st, live), true, nil
	case err == nil || apierrors.IsNotFound(err):
		st.Phase, st.Message = monoclev1alpha1.JobFailed, "The Job was deleted before it finished"
		return st, true, nil
	default:
		return st, true, fmt.Errorf("reading Job %s: %w", st.Name, err)
	}
}

// runsConfig reports whether Deployment d has rolled out a pod template of config configHash
// (or of no config hash: an image that reloads its config by itself) and has a ready pod.
func runsConfig(d *appsv1.Deployment, configHash string) bool {
	if !day2.DeploymentRolledOut(d) || d.Status.ReadyReplicas == 0 {
		return false
	}
	hash, ok := d.Spec.Template.Annotations[resources.ConfigHashAnnotation]
	return !ok || hash == configHash
}

// activeUpdateIdentsJob returns the name of an update-idents Job of m that has not finished,
// or "".
func (c *Controller) activeUpdateIdentsJob(m *monoclev1alpha1.Monocle) (string, error) {
	jobs, err := c.jobs.List(m.Namespace, labels.SelectorFromSet(resources.SelectorLabels(m, resources.ComponentUpdateIdents)))
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if owned.IsControlledBy(j, m) && finished(j) == "" {
			return j.Name, nil
		}
	}
	return "", nil
}

// finished returns the terminal condition type of a Job (Complete or Failed), or "".
func finished(j *batchv1.Job) batchv1.JobConditionType {
	for _, cond := range j.Status.Conditions {
		if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
			return cond.Type
		}
	}
	return ""
}

// jobStatus fills a MaintenanceJobStatus from a live Job.
func jobStatus(want *monoclev1alpha1.MaintenanceJobStatus, j *batchv1.Job) *monoclev1alpha1.MaintenanceJobStatus {
	out := want.DeepCopy()
	out.Phase, out.Message = monoclev1alpha1.JobRunning, ""
	out.StartTime = j.Status.StartTime
	switch finished(j) {
	case batchv1.JobComplete:
		out.Phase = monoclev1alpha1.JobSucceeded
		out.CompletionTime = j.Status.CompletionTime
	case batchv1.JobFailed:
		out.Phase = monoclev1alpha1.JobFailed
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobFailed {
				out.Message = day2.Truncate(cond.Reason + ": " + cond.Message)
				out.CompletionTime = &cond.LastTransitionTime
			}
		}
	}
	return out
}

// identsCondition is the IdentsUpdated condition for the last update-idents Job.
func identsCondition(j *monoclev1alpha1.MaintenanceJobStatus) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionIdentsUpdated, Status: metav1.ConditionTrue, Reason: reasons.UpToDate,
		Message: "No config change has needed an update-idents run"}
	if j == nil {
		return cond
	}
	switch j.Phase {
	case monoclev1alpha1.JobPending:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasons.UpdateIdentsPending, "Job "+j.Name+" is to run. "+j.Message
	case monoclev1alpha1.JobRunning:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasons.UpdateIdentsRunning, "Job "+j.Name+" is running"
	case monoclev1alpha1.JobSucceeded:
		cond.Reason, cond.Message = reasons.UpdateIdentsSucceeded, "Job "+j.Name+" applied the idents of the current config"
	case monoclev1alpha1.JobFailed:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.UpdateIdentsFailed
		cond.Message = fmt.Sprintf("Job %s failed and is not retried; change the config to run update-idents again. %s", j.Name, j.Message)
	}
	return cond
}
