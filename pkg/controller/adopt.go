package controller

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Adoption of what the earlier operator (change-metrics/monocle-operator v0.0.2, built on
// controller-runtime) made for a Monocle. It named its objects as this operator does
// ("<name>-api", "<name>-crawler", "<name>-elastic"), with a controller owner reference to the
// same Monocle, so the ordinary sync steps find them (a create answered AlreadyExists, then a
// read) and update them in place. The legacy shape is kept where Kubernetes forbids a change:
//
//   - The Elasticsearch StatefulSet keeps its selector {app: monocle, tier: elastic} and its
//     volume claim template "<name>-elastic-data-volume" (both immutable), so its pod keeps the
//     PVC "<name>-elastic-data-volume-<name>-elastic-0" and the index. Its pod template gets
//     this operator's containers and labels: the pod is replaced once, by the StatefulSet's
//     rolling update. Nothing is deleted or recreated.
//   - The API and crawler Deployments keep their selectors {app: monocle, tier: api|crawler};
//     their pods carry those labels besides the instance's, and roll once.
//   - A Service keeps the earlier selector and ports until its component's pods with the
//     instance's labels are ready, then selects them alone (serviceClient). Two earlier
//     Monocles in one namespace, whose Services selected each other's pods, are so separated.
//   - The Secret "<name>-api" keeps every key: CRAWLERS_API_KEY of any length, the tokens
//     users added (loaded with envFrom, as before); only MONOCLE_JWK_GEN_KEY is generated.
//   - The ConfigMap "<name>-api" keeps the user's config.yaml (see ensureConfig).
//
// What this file adds to the sync is what those steps cannot do: label the PVC (it has no
// owner, and the operator's label-filtered cache must see it), delete the earlier
// update-idents Job, and report the adoption. It runs while the Secret "<name>-api" is
// controlled by the Monocle but lacks resources.ManagedByLabel, which the Secret metadata
// cache shows without an API call; ensureAPISecret labels that Secret after this step, so a
// sync killed midway runs the step again, and every part of it is idempotent.

// EarlierUpdateIdentsJob is the name of the update-idents Job the earlier operator ran for
// every config change; it is deleted on adoption (it is finished, and its name would be taken
// for ever).
const EarlierUpdateIdentsJob = "update-idents-job"

// earlierObjects is what adoptEarlierObjects found.
type earlierObjects struct {
	// elasticVolume is the volume claim template name of the earlier StatefulSet, or "".
	elasticVolume string
}

// adoption is what the adopt phase decides.
type adoption struct {
	// adopting is set while the Secret "<name>-api" is the earlier operator's.
	adopting bool
	// volume is the name of the Elasticsearch StatefulSet's volume claim template
	// (elasticVolume).
	volume string
}

// earlierSecretPresent reports whether the Secret "<name>-api" was made by the earlier
// operator and is not adopted yet: m controls it and it lacks resources.ManagedByLabel. It
// reads the metadata cache of every Secret (stripSecretMetadata keeps those two facts).
func (c *Controller) earlierSecretPresent(m *monoclev1alpha1.Monocle) bool {
	obj, err := c.secretMetadataLister.ByNamespace(m.Namespace).Get(resources.SecretName(m))
	if err != nil {
		return false
	}
	meta, err := objectMeta(obj)
	if err != nil {
		return false
	}
	return owned.IsControlledBy(meta, m) && meta.GetLabels()[resources.ManagedByLabel] != resources.ManagedByValue
}

// adoptEarlierObjects does the part of an adoption the ensure steps cannot: it labels the
// Elasticsearch PVC, deletes the earlier update-idents Job and records an Adopted event. It
// reads from the API server, since the label-filtered caches cannot see the earlier objects.
// It returns the adopted StatefulSet's volume claim template name for this sync.
func (c *Controller) adoptEarlierObjects(ctx context.Context, m *monoclev1alpha1.Monocle) (earlierObjects, error) {
	var a earlierObjects
	logger := klog.FromContext(ctx)
	var done []string

	job, err := c.kubeclientset.BatchV1().Jobs(m.Namespace).Get(ctx, EarlierUpdateIdentsJob, metav1.GetOptions{})
	switch {
	case err == nil && owned.IsControlledBy(job, m):
		background := metav1.DeletePropagationBackground
		opts := metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &job.UID}}
		if err := c.kubeclientset.BatchV1().Jobs(m.Namespace).Delete(ctx, job.Name, opts); err != nil && !apierrors.IsNotFound(err) {
			return a, fmt.Errorf("deleting the earlier operator's Job %s: %w", job.Name, err)
		}
		logger.V(2).Info("Deleted object", "kind", "Job", "object", klog.KObj(job))
		done = append(done, "deleted Job "+job.Name)
	case err != nil && !apierrors.IsNotFound(err):
		return a, fmt.Errorf("reading Job %s: %w", EarlierUpdateIdentsJob, err)
	}

	// The StatefulSet's volume claim template names the PVC; without a StatefulSet, the PVC
	// may still be there under the earlier operator's name.
	volume := resources.EarlierElasticDataVolume(m)
	sts, err := c.statefulSets.Read(ctx, m.Namespace, resources.ElasticName(m))
	switch {
	case err == nil && owned.IsControlledBy(sts, m) && len(sts.Spec.VolumeClaimTemplates) > 0:
		volume = sts.Spec.VolumeClaimTemplates[0].Name
		a.elasticVolume = volume
	case err != nil && !apierrors.IsNotFound(err):
		return a, fmt.Errorf("reading StatefulSet %s: %w", resources.ElasticName(m), err)
	}
	pvcName := resources.ElasticPVCName(m, volume)
	pvc, err := c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Get(ctx, pvcName, metav1.GetOptions{})
	switch {
	case err == nil:
		a.elasticVolume = volume
		want := resources.Labels(m, resources.ComponentElastic)
		if !owned.IsSubset(want, pvc.Labels) {
			labelled := pvc.DeepCopy()
			labelled.Labels = owned.Union(pvc.Labels, want)
			if _, err := c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Update(ctx, labelled, metav1.UpdateOptions{FieldManager: ControllerName}); err != nil {
				return a, fmt.Errorf("labelling PVC %s: %w", pvcName, err)
			}
		}
		size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		done = append(done, fmt.Sprintf("kept PVC %s (uid %s, %s) with the Elasticsearch data", pvcName, pvc.UID, size.String()))
	case apierrors.IsNotFound(err):
		done = append(done, "found no PVC "+pvcName)
	default:
		return a, fmt.Errorf("reading PVC %s: %w", pvcName, err)
	}

	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Adopted,
		"Adopting the objects the earlier operator made: %s; Secret %s and ConfigMap %s keep their keys and config; the Elasticsearch, API and crawler pods are replaced once",
		strings.Join(done, ", "), resources.SecretName(m), resources.ConfigMapName(m))
	return a, nil
}

// elasticVolume returns the volume claim template name of m's Elasticsearch StatefulSet:
// adopted's when this sync adopted one; else the observed StatefulSet's (immutable); else the
// earlier operator's when its PVC, labelled on adoption, exists (the StatefulSet was deleted
// since); else resources.ElasticDataVolume.
func (c *Controller) elasticVolume(m *monoclev1alpha1.Monocle, live *appsv1.StatefulSet, adopted earlierObjects) string {
	if adopted.elasticVolume != "" {
		return adopted.elasticVolume
	}
	if live != nil && len(live.Spec.VolumeClaimTemplates) > 0 {
		return live.Spec.VolumeClaimTemplates[0].Name
	}
	earlier := resources.EarlierElasticDataVolume(m)
	if _, err := c.pvcs.Get(m.Namespace, resources.ElasticPVCName(m, earlier)); err == nil {
		return earlier
	}
	return resources.ElasticDataVolume
}

// adoptedCondition is the Adopted condition of a Monocle whose Elasticsearch StatefulSet
// uses volume, or nil for a Monocle this operator created.
func adoptedCondition(m *monoclev1alpha1.Monocle, volume string) *metav1.Condition {
	if volume != resources.EarlierElasticDataVolume(m) {
		return nil
	}
	return &metav1.Condition{
		Type: monoclev1alpha1.ConditionAdopted, Status: metav1.ConditionTrue, Reason: reasons.AdoptedEarlierOperator,
		Message: fmt.Sprintf("Adopted from the earlier operator: StatefulSet %s keeps its selector app=monocle,tier=elastic and volume claim template %s, so Elasticsearch keeps PVC %s; each Service selects this instance's pods once they are ready",
			resources.ElasticName(m), volume, resources.ElasticPVCName(m, volume)),
	}
}

// serviceClient returns the kind client for the Service of a component whose workload is
// ready (rolledOut: every pod runs the desired template, which carries the instance's
// selector labels, and is ready) or not. A Service still selecting with the earlier
// operator's selector is left as it is until then: its selector and numeric target ports
// reach the earlier pods and, through the earlier labels an adopted workload keeps, the new
// ones, so it never points at nothing during the hand-over.
func (c *Controller) serviceClient(rolledOut bool) owned.Kind[*corev1.Service] {
	if rolledOut {
		return c.services
	}
	held := func(live *corev1.Service, component string) bool {
		return equality.Semantic.DeepEqual(live.Spec.Selector, resources.EarlierSelector(component))
	}
	return c.services.WithDrift(func(desired, live *corev1.Service) bool {
		return !held(live, desired.Labels[resources.ComponentLabel]) && c.services.Drifted(desired, live)
	}, func(desired, live *corev1.Service) *corev1.Service {
		if held(live, desired.Labels[resources.ComponentLabel]) {
			return live.DeepCopy()
		}
		return c.services.Merge(desired, live)
	})
}

// deploymentServes reports whether d is ready (deploymentStatus) with a template that carries
// the instance's selector labels of component.
func deploymentServes(m *monoclev1alpha1.Monocle, d *appsv1.Deployment, component string) bool {
	return deploymentStatus(d).Ready && owned.IsSubset(resources.SelectorLabels(m, component), d.Spec.Template.Labels)
}

// statefulSetServes is deploymentServes for the Elasticsearch StatefulSet.
func statefulSetServes(m *monoclev1alpha1.Monocle, s *appsv1.StatefulSet) bool {
	return statefulSetStatus(s).Ready && owned.IsSubset(resources.SelectorLabels(m, resources.ComponentElastic), s.Spec.Template.Labels)
}

// adopt is the sync's first phase: an earlier operator's objects are adopted before
// ensureAPISecret labels the Secret that tells them apart. The sync goes no further when that
// fails, so the Secret stays unlabelled and the next sync adopts again. It also decides the
// name of the Elasticsearch volume, which an adopted StatefulSet keeps.
func (c *Controller) adopt(ctx context.Context, st *syncState) (adoption, error) {
	m := st.m
	var a adoption
	var earlier earlierObjects
	if a.adopting = c.earlierSecretPresent(m); a.adopting {
		var err error
		if earlier, err = c.adoptEarlierObjects(ctx, m); err != nil {
			if serverUnavailable(err) {
				return a, &unavailableError{err}
			}
			c.recorder.Event(m, corev1.EventTypeWarning, reasons.SyncFailed, err.Error())
			return a, err
		}
	}
	a.volume = c.elasticVolume(m, st.observed.elastic, earlier)
	if cond := adoptedCondition(m, a.volume); cond != nil {
		st.setCondition(*cond)
	}
	return a, nil
}
