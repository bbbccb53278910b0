package kubectlmonocle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// undoClockSkew is how much earlier than the roll's start (by the operator's clock) a
// workload revision may have been created (by the API server's) and still count as the
// roll's: the operator records the start, then writes the workloads, and the clocks differ.
const undoClockSkew = time.Minute

var (
	deploymentKind  = schema.GroupKind{Group: appsv1.GroupName, Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: appsv1.GroupName, Kind: "StatefulSet"}
)

// workload is a Deployment or a StatefulSet.
type workload interface {
	runtime.Object
	metav1.Object
}

// undoStep is what undo does to one workload: roll it back to revision, or, with rollback
// nil, leave it as it is, for the reason skipped.
type undoStep struct {
	// printed names the workload as kubectl prints it: deployment.apps/demo-api.
	printed  string
	obj      workload
	revision int64
	rollback polymorphichelpers.Rollbacker
	skipped  string
}

// RolloutUndo rolls the workloads of Monocle name back to the pod templates they ran before
// its roll, as `kubectl rollout undo` does and with kubectl's own code
// (k8s.io/kubectl/pkg/polymorphichelpers): Deployments NAME-api and NAME-crawler to the
// template of their ReplicaSet of the revision before the newest, and StatefulSet
// NAME-elastic, when there is one, to its ControllerRevision before the newest. It prints
// each workload with the revision it was rolled back to.
//
// A workload whose newest revision was created before the roll started
// (status.rollout.startTime) is left as it is, saying so: the roll did not change its
// template, or it was rolled back already, and undoing it would bring back an older template
// of the owner's, or the very template that failed. It refuses (a Refusal) a Monocle whose
// roll is not Failed, unless force: the operator writes the workloads of such a Monocle, and
// would write its templates again over the undo. Every workload is read before any is
// written; a missing Deployment, or a workload the roll changed without an earlier revision,
// is an error.
func (p *Plugin) RolloutUndo(ctx context.Context, name string, force bool) error {
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	if why := notFailed(m); why != "" && !force {
		return &Refusal{Monocle: name, Reason: why + ": the operator writes the workloads of a Monocle whose roll has not failed, " +
			"and would write its templates again over the undo (--force rolls back all the same)"}
	}
	var since *metav1.Time
	if r := m.Status.Rollout; r != nil {
		since = r.StartTime
	}
	var steps []undoStep
	plan := func(kind schema.GroupKind, obj workload, created func(history map[int64]runtime.Object, newest int64) (metav1.Time, error)) error {
		step, err := p.planUndo(kind, obj, since, created)
		steps = append(steps, step)
		return err
	}
	for _, d := range []string{resources.APIName(m), resources.CrawlerName(m)} {
		dep, err := p.Kube.AppsV1().Deployments(p.Namespace).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := plan(deploymentKind, dep, func(history map[int64]runtime.Object, newest int64) (metav1.Time, error) {
			return history[newest].(*appsv1.ReplicaSet).CreationTimestamp, nil
		}); err != nil {
			return err
		}
	}
	sts, err := p.Kube.AppsV1().StatefulSets(p.Namespace).Get(ctx, resources.ElasticName(m), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// An Elasticsearch that is not the bundled one: none of it to roll back.
	case err != nil:
		return err
	default:
		// The history holds the StatefulSet each revision gives, without its
		// ControllerRevision's time: the newest is the one the pods are updated to.
		if err := plan(statefulSetKind, sts, func(map[int64]runtime.Object, int64) (metav1.Time, error) {
			if sts.Status.UpdateRevision == "" {
				return metav1.Time{}, fmt.Errorf("StatefulSet %s records no update revision yet (status.updateRevision)", sts.Name)
			}
			cr, err := p.Kube.AppsV1().ControllerRevisions(p.Namespace).Get(ctx, sts.Status.UpdateRevision, metav1.GetOptions{})
			if err != nil {
				return metav1.Time{}, err
			}
			return cr.CreationTimestamp, nil
		}); err != nil {
			return err
		}
	}
	rolled := false
	for _, s := range steps {
		result := s.skipped
		if s.rollback != nil {
			if result, err = s.rollback.Rollback(s.obj, nil, s.revision, cmdutil.DryRunNone); err != nil {
				return fmt.Errorf("%s: %w", s.printed, err)
			}
			if result == "rolled back" {
				result, rolled = fmt.Sprintf("rolled back to revision %d", s.revision), true
			}
		}
		if err := p.printf("%s %s\n", s.printed, result); err != nil {
			return err
		}
	}
	if r := m.Status.Rollout; rolled && r != nil && r.Phase == monoclev1alpha1.RolloutFailed {
		return p.printf("the operator leaves them so while the roll of %s is Failed: `kubectl monocle rollout resume %s` writes its templates again once the cause is fixed\n",
			r.Revision, name)
	}
	return nil
}

// planUndo reads the history of workload obj of kind with kubectl's HistoryViewer and
// returns the step that rolls it back to the revision before its newest, or, when its newest
// revision was created (created) before since less undoClockSkew, the step that leaves it.
func (p *Plugin) planUndo(kind schema.GroupKind, obj workload, since *metav1.Time,
	created func(history map[int64]runtime.Object, newest int64) (metav1.Time, error)) (undoStep, error) {
	step := undoStep{printed: strings.ToLower(kind.Kind) + "." + kind.Group + "/" + obj.GetName(), obj: obj}
	viewer, err := polymorphichelpers.HistoryViewerFor(kind, p.Kube)
	if err != nil {
		return step, err
	}
	history, err := viewer.GetHistory(obj.GetNamespace(), obj.GetName())
	if err != nil {
		return step, err
	}
	revisions := make([]int64, 0, len(history))
	for r := range history {
		revisions = append(revisions, r)
	}
	slices.Sort(revisions)
	if len(revisions) == 0 {
		return step, fmt.Errorf("%s has no revision yet", step.printed)
	}
	newest := revisions[len(revisions)-1]
	if since != nil {
		at, err := created(history, newest)
		if err != nil {
			return step, fmt.Errorf("%s: %w", step.printed, err)
		}
		if at.Add(undoClockSkew).Before(since.Time) {
			step.skipped = fmt.Sprintf("left at revision %d, created %s before the roll started: the roll did not change it, or it was rolled back already",
				newest, duration.HumanDuration(since.Sub(at.Time)))
			return step, nil
		}
	}
	if len(revisions) < 2 {
		return step, fmt.Errorf("%s has no revision before its newest, %d, to roll back to", step.printed, newest)
	}
	step.revision = revisions[len(revisions)-2]
	step.rollback, err = polymorphichelpers.RollbackerFor(kind, p.Kube)
	return step, err
}
