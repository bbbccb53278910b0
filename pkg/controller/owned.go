package controller

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// object is an API object the operator owns.
type object interface {
	metav1.Object
	runtime.Object
}

// kindClient reads one owned kind from its lister and writes it through the typed client. It
// also knows which fields of the kind the operator owns: drifted compares them, merge writes
// them into a copy of the live object. Fields the operator does not set (and the ones the API
// server defaults) are left as they are.
//
// get reads the lister cache; read asks the API server, for the rare object the filtered
// cache cannot see.
type kindClient[T object] struct {
	kind    string
	get     func(namespace, name string) (T, error)
	read    func(ctx context.Context, namespace, name string) (T, error)
	create  func(ctx context.Context, obj T) (T, error)
	update  func(ctx context.Context, obj T) (T, error)
	drifted func(desired, live T) bool
	merge   func(desired, live T) T
}

// conflictError reports an object that has the name the operator needs but is not controlled
// by the Monocle. The operator never writes such an object.
type conflictError struct {
	kind, name string
}

func (e *conflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this Monocle: delete or rename it", e.kind, e.name)
}

// ensure makes the live object match desired in the fields the operator owns: it creates a
// missing object, updates a drifted one with the cached resourceVersion (a concurrent change
// makes the update fail with a conflict, and the key is retried), and leaves a matching one
// alone without any API call. It returns the live object after the step, and a
// *conflictError when the name is taken by an object m does not control.
func ensure[T object](ctx context.Context, c *Controller, m *monoclev1alpha1.Monocle, k kindClient[T], desired T) (T, error) {
	var zero T
	logger := klog.FromContext(ctx)
	name := desired.GetName()
	live, err := k.get(desired.GetNamespace(), name)
	if apierrors.IsNotFound(err) {
		created, createErr := k.create(ctx, desired)
		if createErr == nil {
			logger.V(2).Info("Created object", "kind", k.kind, "object", klog.KObj(created))
			c.recorder.Eventf(m, corev1.EventTypeNormal, ReasonCreated, "Created %s %s", k.kind, name)
			return created, nil
		}
		if !apierrors.IsAlreadyExists(createErr) {
			return zero, fmt.Errorf("creating %s %s: %w", k.kind, name, createErr)
		}
		// Either the cache is behind, or the object lacks our label and so is invisible to
		// the filtered informer: read it from the API server and carry on with it.
		live, err = k.read(ctx, desired.GetNamespace(), name)
		if err != nil {
			return zero, fmt.Errorf("creating %s %s: %w (and reading it: %v)", k.kind, name, createErr, err)
		}
	} else if err != nil {
		return zero, fmt.Errorf("reading %s %s from the cache: %w", k.kind, name, err)
	}
	if !isControlledBy(live, m) {
		return zero, c.nameConflict(m, k.kind, name)
	}
	if !metadataDrifted(desired, live) && !k.drifted(desired, live) {
		return live, nil
	}
	merged := k.merge(desired, live)
	mergeMetadata(desired, merged)
	updated, err := k.update(ctx, merged)
	if err != nil {
		return zero, fmt.Errorf("updating %s %s: %w", k.kind, name, err)
	}
	logger.V(2).Info("Updated object", "kind", k.kind, "object", klog.KObj(updated))
	c.recorder.Eventf(m, corev1.EventTypeNormal, ReasonUpdated, "Updated %s %s to the desired state", k.kind, name)
	return updated, nil
}

// nameConflict records a Warning event for an object the Monocle needs but does not control,
// and returns the *conflictError that the status reports.
func (c *Controller) nameConflict(m *monoclev1alpha1.Monocle, kind, name string) error {
	c.recorder.Eventf(m, corev1.EventTypeWarning, ReasonNameConflict,
		"%s %s exists and is not controlled by this Monocle; it was left unchanged", kind, name)
	return &conflictError{kind: kind, name: name}
}

// metadataDrifted reports whether live lacks one of desired's labels or carries another spec
// hash. Labels and annotations others add are not ours and are kept.
func metadataDrifted(desired, live metav1.Object) bool {
	return !isSubset(desired.GetLabels(), live.GetLabels()) ||
		desired.GetAnnotations()[resources.SpecHashAnnotation] != live.GetAnnotations()[resources.SpecHashAnnotation]
}

// mergeMetadata writes desired's labels and spec hash into out, keeping the others.
func mergeMetadata(desired, out metav1.Object) {
	out.SetLabels(union(out.GetLabels(), desired.GetLabels()))
	if hash, ok := desired.GetAnnotations()[resources.SpecHashAnnotation]; ok {
		out.SetAnnotations(union(out.GetAnnotations(), map[string]string{resources.SpecHashAnnotation: hash}))
	}
}

func isSubset(sub, set map[string]string) bool {
	for k, v := range sub {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// union returns a new map with base's entries overwritten by over's.
func union(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// newKindClients wires the listers and typed clients of every owned kind.
func (c *Controller) newKindClients() {
	create := metav1.CreateOptions{FieldManager: ControllerName}
	update := metav1.UpdateOptions{FieldManager: ControllerName}
	core := c.kubeclientset.CoreV1()
	apps := c.kubeclientset.AppsV1()
	c.secrets = kindClient[*corev1.Secret]{
		kind: "Secret",
		get:  func(ns, name string) (*corev1.Secret, error) { return c.secretsLister.Secrets(ns).Get(name) },
		read: func(ctx context.Context, ns, name string) (*corev1.Secret, error) {
			return core.Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o *corev1.Secret) (*corev1.Secret, error) {
			return core.Secrets(o.Namespace).Create(ctx, o, create)
		},
		update: func(ctx context.Context, o *corev1.Secret) (*corev1.Secret, error) {
			return core.Secrets(o.Namespace).Update(ctx, o, update)
		},
		drifted: secretDrifted,
		merge:   mergeSecret,
	}
	c.configMaps = kindClient[*corev1.ConfigMap]{
		kind: "ConfigMap",
		get:  func(ns, name string) (*corev1.ConfigMap, error) { return c.configMapsLister.ConfigMaps(ns).Get(name) },
		read: func(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
			return core.ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return core.ConfigMaps(o.Namespace).Create(ctx, o, create)
		},
		update: func(ctx context.Context, o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return core.ConfigMaps(o.Namespace).Update(ctx, o, update)
		},
		drifted: configMapDrifted,
		merge:   mergeConfigMap,
	}
	// The user's ConfigMap (spec.config unset): created when missing, its data never written.
	c.userConfigMaps = c.configMaps
	c.userConfigMaps.drifted = func(_, _ *corev1.ConfigMap) bool { return false }
	c.userConfigMaps.merge = func(_, live *corev1.ConfigMap) *corev1.ConfigMap { return live.DeepCopy() }
	c.services = kindClient[*corev1.Service]{
		kind: "Service",
		get:  func(ns, name string) (*corev1.Service, error) { return c.servicesLister.Services(ns).Get(name) },
		read: func(ctx context.Context, ns, name string) (*corev1.Service, error) {
			return core.Services(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o *corev1.Service) (*corev1.Service, error) {
			return core.Services(o.Namespace).Create(ctx, o, create)
		},
		update: func(ctx context.Context, o *corev1.Service) (*corev1.Service, error) {
			return core.Services(o.Namespace).Update(ctx, o, update)
		},
		drifted: serviceDrifted,
		merge:   mergeService,
	}
	c.deployments = kindClient[*appsv1.Deployment]{
		kind: "Deployment",
		get: func(ns, name string) (*appsv1.Deployment, error) {
			return c.deploymentsLister.Deployments(ns).Get(name)
		},
		read: func(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
			return apps.Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o *appsv1.Deployment) (*appsv1.Deployment, error) {
			return apps.Deployments(o.Namespace).Create(ctx, o, create)
		},
		update: func(ctx context.Context, o *appsv1.Deployment) (*appsv1.Deployment, error) {
			return apps.Deployments(o.Namespace).Update(ctx, o, update)
		},
		drifted: deploymentDrifted,
		merge:   mergeDeployment,
	}
	policy := c.kubeclientset.PolicyV1()
	c.pdbs = kindClient[*policyv1.PodDisruptionBudget]{
		kind: "PodDisruptionBudget",
		get: func(ns, name string) (*policyv1.PodDisruptionBudget, error) {
			return c.pdbsLister.PodDisruptionBudgets(ns).Get(name)
		},
		read: func(ctx context.Context, ns, name string) (*policyv1.PodDisruptionBudget, error) {
			return policy.PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
			return policy.PodDisruptionBudgets(o.Namespace).Create(ctx, o, create)
		},
		update: func(ctx context.Context, o *policyv1.PodDisruptionBudget) (*policyv1.PodDisruptionBudget, error) {
			return policy.PodDisruptionBudgets(o.Namespace).Update(ctx, o, update)
		},
		drifted: func(desired, live *policyv1.PodDisruptionBudget) bool {
			return !equality.Semantic.DeepEqual(desired.Spec.MaxUnavailable, live.Spec.MaxUnavailable) ||
				!equality.Semantic.DeepEqual(desired.Spec.MinAvailable, live.Spec.MinAvailable) ||
				!equality.Semantic.DeepEqual(desired.Spec.Selector, live.Spec.Selector)
		},
		merge: func(desired, live *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
			out := live.DeepCopy()
			out.Spec.MaxUnavailable, out.Spec.MinAvailable, out.Spec.Selector = desired.Spec.MaxUnavailable, desired.Spec.MinAvailable, desired.Spec.Selector
			return out
		},
	}
	c.statefulSets = kindClient[*appsv1.StatefulSet]{
		kind: "StatefulSet",
		get: func(ns, name string) (*appsv1.StatefulSet, error) {
			return c.statefulSetsLister.StatefulSets(ns).Get(name)
		},
		read: func(ctx context.Context, ns, name string) (*appsv1.StatefulSet, error) {
			return apps.StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
			return apps.StatefulSets(o.Namespace).Create(ctx, o, create)
		},
		update: func(ctx context.Context, o *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
			return apps.StatefulSets(o.Namespace).Update(ctx, o, update)
		},
		drifted: statefulSetDrifted,
		merge:   mergeStatefulSet,
	}
}

// secretDrifted reports whether a key the operator writes is missing or different. Keys
// others add are kept.
func secretDrifted(desired, live *corev1.Secret) bool {
	for k, v := range desired.Data {
		if !bytes.Equal(live.Data[k], v) {
			return true
		}
	}
	return false
}

func mergeSecret(desired, live *corev1.Secret) *corev1.Secret {
	out := live.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	for k, v := range desired.Data {
		out.Data[k] = v
	}
	return out
}

// configMapDrifted reports whether config.yaml differs; keys others add are kept.
func configMapDrifted(desired, live *corev1.ConfigMap) bool {
	_, binary := live.BinaryData[resources.ConfigKey]
	return binary || live.Data[resources.ConfigKey] != desired.Data[resources.ConfigKey]
}

// mergeConfigMap writes config.yaml into a copy of live.
func mergeConfigMap(desired, live *corev1.ConfigMap) *corev1.ConfigMap {
	out := live.DeepCopy()
	if out.Data == nil {
		out.Data = map[string]string{}
	}
	out.Data[resources.ConfigKey] = desired.Data[resources.ConfigKey]
	delete(out.BinaryData, resources.ConfigKey)
	return out
}

// ownedServicePorts keeps the port fields the operator sets; the API server fills in the rest.
func ownedServicePorts(ports []corev1.ServicePort) []corev1.ServicePort {
	out := make([]corev1.ServicePort, len(ports))
	for i, p := range ports {
		out[i] = corev1.ServicePort{Name: p.Name, Port: p.Port, TargetPort: p.TargetPort, Protocol: p.Protocol}
	}
	return out
}

func serviceDrifted(desired, live *corev1.Service) bool {
	return desired.Spec.Type != live.Spec.Type ||
		!equality.Semantic.DeepEqual(desired.Spec.Selector, live.Spec.Selector) ||
		!equality.Semantic.DeepEqual(ownedServicePorts(desired.Spec.Ports), ownedServicePorts(live.Spec.Ports))
}

// mergeService writes the type, selector and ports, keeping the allocated cluster IPs.
func mergeService(desired, live *corev1.Service) *corev1.Service {
	out := live.DeepCopy()
	out.Spec.Type = desired.Spec.Type
	out.Spec.Selector = desired.Spec.Selector
	out.Spec.Ports = desired.Spec.Ports
	return out
}

func deploymentDrifted(desired, live *appsv1.Deployment) bool {
	return !equality.Semantic.DeepEqual(desired.Spec.Replicas, live.Spec.Replicas) ||
		!equality.Semantic.DeepEqual(desired.Spec.Strategy, live.Spec.Strategy) ||
		podTemplateDrifted(&desired.Spec.Template, &live.Spec.Template)
}

func mergeDeployment(desired, live *appsv1.Deployment) *appsv1.Deployment {
	out := live.DeepCopy()
	out.Spec.Replicas = desired.Spec.Replicas
	out.Spec.Strategy = desired.Spec.Strategy
	out.Spec.Template = mergePodTemplate(&desired.Spec.Template, &live.Spec.Template)
	return out
}

// statefulSetDrifted compares the fields of a StatefulSet that can be updated; the selector,
// service name and volume claim templates are immutable.
func statefulSetDrifted(desired, live *appsv1.StatefulSet) bool {
	return !equality.Semantic.DeepEqual(desired.Spec.Replicas, live.Spec.Replicas) ||
		desired.Spec.UpdateStrategy.Type != live.Spec.UpdateStrategy.Type ||
		!equality.Semantic.DeepEqual(desired.Spec.PersistentVolumeClaimRetentionPolicy, live.Spec.PersistentVolumeClaimRetentionPolicy) ||
		podTemplateDrifted(&desired.Spec.Template, &live.Spec.Template)
}

func mergeStatefulSet(desired, live *appsv1.StatefulSet) *appsv1.StatefulSet {
	out := live.DeepCopy()
	out.Spec.Replicas = desired.Spec.Replicas
	out.Spec.UpdateStrategy = desired.Spec.UpdateStrategy
	out.Spec.PersistentVolumeClaimRetentionPolicy = desired.Spec.PersistentVolumeClaimRetentionPolicy
	out.Spec.Template = mergePodTemplate(&desired.Spec.Template, &live.Spec.Template)
	return out
}

// podTemplateDrifted reports whether live lacks desired's template labels or annotations, or
// differs in an owned pod field (ownedPodSpec).
func podTemplateDrifted(desired, live *corev1.PodTemplateSpec) bool {
	return !isSubset(desired.Labels, live.Labels) ||
		!isSubset(desired.Annotations, live.Annotations) ||
		!equality.Semantic.DeepEqual(ownedPodSpec(&desired.Spec), ownedPodSpec(&live.Spec))
}

// mergePodTemplate returns desired's template with the labels and annotations others put on
// live's (e.g. kubectl rollout restart's restartedAt), so repairing drift does not roll pods
// needlessly.
func mergePodTemplate(desired, live *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	out := *desired.DeepCopy()
	out.Labels = union(live.Labels, desired.Labels)
	out.Annotations = union(live.Annotations, desired.Annotations)
	// Our own annotations the desired template no longer has (a config hash for an image
	// that reloads config by itself) go, so none is left stale.
	for k := range out.Annotations {
		if _, ok := desired.Annotations[k]; !ok && strings.HasPrefix(k, resources.AnnotationPrefix) {
			delete(out.Annotations, k)
		}
	}
	return out
}

// ownedPodSpec keeps the pod and container fields the builders set. Comparing these, rather
// than whole specs, ignores what the API server defaults; the builders set every numeric field
// of what they own (probe thresholds, modes) so that defaulting never changes an owned field.
func ownedPodSpec(s *corev1.PodSpec) corev1.PodSpec {
	owned := func(cs []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{
				Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args,
				Env: c.Env, EnvFrom: c.EnvFrom, Ports: c.Ports, Resources: c.Resources,
				StartupProbe: c.StartupProbe, ReadinessProbe: c.ReadinessProbe, LivenessProbe: c.LivenessProbe,
				SecurityContext: c.SecurityContext, VolumeMounts: c.VolumeMounts,
				ImagePullPolicy: c.ImagePullPolicy, TerminationMessagePolicy: c.TerminationMessagePolicy,
			}
		}
		return out
	}
	return corev1.PodSpec{
		InitContainers:                owned(s.InitContainers),
		Containers:                    owned(s.Containers),
		Volumes:                       s.Volumes,
		SecurityContext:               s.SecurityContext,
		AutomountServiceAccountToken:  s.AutomountServiceAccountToken,
		EnableServiceLinks:            s.EnableServiceLinks,
		TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
	}
}
