package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// configState is the config.yaml a sync works with.
type configState struct {
	// config is what the pods are to run: the config of its source when valid, else (for
	// spec.config) the last valid config held by the ConfigMap, else "" when there is none.
	config string
	// parsed is config parsed, nil when config is "".
	parsed *monocleconfig.Config
	// valid is false when the config of the source was refused.
	valid bool
	// source says where config comes from.
	source monoclev1alpha1.ConfigSource
	// condition is ConfigValid.
	condition metav1.Condition
}

// ensureConfig keeps the ConfigMap "<name>-api" holding config.yaml and returns the config the
// pods are to run. With spec.config set, the operator writes it there (ensureSpecConfig);
// without, the ConfigMap belongs to the user, as with the earlier operator
// (ensureUserConfig). Either way an invalid config is reported in ConfigValid and never
// rolled out.
func (c *Controller) ensureConfig(ctx context.Context, m *monoclev1alpha1.Monocle) (configState, error) {
	if m.Spec.Config == "" {
		return c.ensureUserConfig(ctx, m)
	}
	return c.ensureSpecConfig(ctx, m)
}

// ensureSpecConfig validates spec.config and writes it into the ConfigMap. An invalid config
// is reported and the last valid one, held by the ConfigMap, stays in use: the running Monocle
// is never handed a config it would refuse. When spec.config replaces a config the user kept
// in the ConfigMap (the previous source was the ConfigMap, or an adopted earlier Monocle's),
// that config is kept under resources.ReplacedConfigKey.
func (c *Controller) ensureSpecConfig(ctx context.Context, m *monoclev1alpha1.Monocle) (configState, error) {
	st := configState{source: monoclev1alpha1.ConfigFromSpec}
	want := m.Spec.Config
	if parsed, err := monocleconfig.Parse(want); err == nil {
		st.config, st.parsed, st.valid = want, parsed, true
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: reasons.ConfigAccepted,
			Message: fmt.Sprintf("spec.config defines %d workspace(s)", len(parsed.Workspaces)),
		}
	} else {
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionFalse, Reason: reasons.InvalidConfig,
			Message: day2.Truncate("spec.config is not a valid Monocle config, the last valid config stays in use: " + err.Error()),
		}
		if live, err := c.configMaps.Get(m.Namespace, resources.ConfigMapName(m)); err == nil && owned.IsControlledBy(live, m) {
			if last, err := monocleconfig.Parse(live.Data[resources.ConfigKey]); err == nil {
				st.config, st.parsed = live.Data[resources.ConfigKey], last
			}
		}
	}
	if st.config == "" {
		return st, nil
	}
	k := c.configMaps
	if m.Status.ConfigSource != monoclev1alpha1.ConfigFromSpec {
		k = c.configMaps.WithDrift(c.configMaps.Drifted, func(desired, live *corev1.ConfigMap) *corev1.ConfigMap {
			out := c.configMaps.Merge(desired, live)
			if replaced := live.Data[resources.ConfigKey]; replaced != "" && replaced != desired.Data[resources.ConfigKey] {
				out.Data[resources.ReplacedConfigKey] = replaced
			}
			return out
		})
	}
	if _, err := k.Ensure(ctx, c.recorder, m, resources.NewConfigMap(m, st.config)); err != nil {
		st.config, st.parsed = "", nil
		return st, err
	}
	return st, nil
}

// ensureUserConfig returns the config.yaml of the ConfigMap "<name>-api", which belongs to the
// user while spec.config is unset: it is created with resources.DefaultConfig when missing,
// labelled when adopted, and its data is never written. A config Monocle would refuse is
// reported and not rolled out; the running pods keep the config they started with (Monocle
// up to 1.11.2 does not reload a ConfigMap volume), and a pod that restarts meanwhile reads
// the ConfigMap as it is.
func (c *Controller) ensureUserConfig(ctx context.Context, m *monoclev1alpha1.Monocle) (configState, error) {
	st := configState{source: monoclev1alpha1.ConfigFromConfigMap}
	name := resources.ConfigMapName(m)
	cm, err := c.userConfigMaps.Ensure(ctx, c.recorder, m, resources.NewConfigMap(m, resources.DefaultConfig))
	if err != nil {
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionUnknown, Reason: reasons.ConfigMapUnavailable,
			Message: fmt.Sprintf("spec.config is unset and ConfigMap %s, which then holds config.yaml, cannot be read or created", name),
		}
		return st, err
	}
	parsed, err := monocleconfig.Parse(cm.Data[resources.ConfigKey])
	if err != nil {
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionFalse, Reason: reasons.InvalidConfig,
			Message: day2.Truncate(fmt.Sprintf("ConfigMap %s does not hold a valid Monocle config.yaml; the API and crawler are not restarted until it does (a pod that restarts meanwhile reads it): %v",
				name, err)),
		}
		return st, nil
	}
	st.config, st.parsed, st.valid = cm.Data[resources.ConfigKey], parsed, true
	st.condition = metav1.Condition{
		Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: reasons.ConfigAccepted,
		Message: fmt.Sprintf("spec.config is unset; config.yaml of ConfigMap %s defines %d workspace(s)", name, len(parsed.Workspaces)),
	}
	return st, nil
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
// janitor fails on a workspace whose index does not exist yet.
func (c *Controller) ensureUpdateIdents(ctx context.Context, m *monoclev1alpha1.Monocle, configHash string, api *appsv1.Deployment) (*monoclev1alpha1.MaintenanceJobStatus, error) {
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
		resources.NewUpdateIdentsJob(m, configHash), metav1.CreateOptions{FieldManager: ControllerName})
	if err != nil {
		return want, fmt.Errorf("creating Job %s: %w", want.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Created object", "kind", "Job", "object", klog.KObj(created))
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created Job %s to run update-idents for the new config", created.Name)
	return jobStatus(want, created), nil
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

// recordJobTransition records an event when the update-idents Job finished since the last
// status.
func (c *Controller) recordJobTransition(m *monoclev1alpha1.Monocle, before, after *monoclev1alpha1.MaintenanceJobStatus) {
	if after == nil || equality.Semantic.DeepEqual(before, after) || (before != nil && before.Name == after.Name && before.Phase == after.Phase) {
		return
	}
	switch after.Phase {
	case monoclev1alpha1.JobSucceeded:
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.UpdateIdentsSucceeded, "Job %s succeeded", after.Name)
	case monoclev1alpha1.JobFailed:
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.UpdateIdentsFailed, "Job %s failed: %s", after.Name, after.Message)
	}
}
