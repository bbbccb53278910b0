package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// observed is what one sync saw of the workloads, for the status.
type observed struct {
	elastic *appsv1.StatefulSet
	api     *appsv1.Deployment
	crawler *appsv1.Deployment
}

// syncHandler converges the objects of the Monocle named by key and writes its status. A
// Monocle that is gone or being deleted needs nothing: owner references let the garbage
// collector remove what it owned, and the Elasticsearch PVC, which has no owner, stays. The
// steps are independent where they can be, so one failing object does not hold back the
// others; their errors are returned together and the key is retried.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)
	cached, err := c.monoclesLister.Monocles(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Monocle is gone")
		monocleReady.DeleteLabelValues(key.Namespace, key.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Monocle from the cache: %w", err)
	}
	if cached.DeletionTimestamp != nil {
		return nil
	}
	m := cached.DeepCopy()

	var errs []error
	var obs observed
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	secret, err := c.ensureSecret(ctx, m)
	keep(err)
	config := resources.Config(m)
	_, configErr := ensure(ctx, c, m, c.configMaps, resources.NewConfigMap(m, config))
	keep(configErr)

	_, err = ensure(ctx, c, m, c.services, resources.NewElasticService(m))
	keep(err)
	obs.elastic, err = ensure(ctx, c, m, c.statefulSets, resources.NewElasticStatefulSet(m))
	keep(err)

	_, err = ensure(ctx, c, m, c.services, resources.NewAPIService(m))
	keep(err)
	// The API and the crawler read the Secret and the ConfigMap: without them their pods
	// cannot start, and their hashes cannot be known.
	if secret != nil && configErr == nil {
		in := resources.Inputs{
			ConfigHash: resources.ConfigHash(config),
			SecretHash: resources.SecretHash(secret.Data),
		}
		obs.api, err = ensure(ctx, c, m, c.deployments, resources.NewAPIDeployment(m, in))
		keep(err)
		obs.crawler, err = ensure(ctx, c, m, c.deployments, resources.NewCrawlerDeployment(m, in))
		keep(err)
	}

	problems := classify(errs)
	if problems.transientOnly() {
		// The cache was behind the API server; the retry will see the current state, so a
		// status written now would only flap.
		return utilerrors.NewAggregate(errs)
	}
	for _, err := range problems.failures {
		c.recorder.Event(m, corev1.EventTypeWarning, ReasonSyncFailed, err.Error())
	}
	if err := c.updateMonocleStatus(ctx, m, obs, problems); err != nil {
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

// ensureSecret keeps the Secret "<name>-api" holding the generated keys. A key the Secret
// already holds with a valid value is kept as it is, whoever last wrote the Secret; a missing
// or short one is generated with crypto/rand, and an event says so.
func (c *Controller) ensureSecret(ctx context.Context, m *monoclev1alpha1.Monocle) (*corev1.Secret, error) {
	name := resources.SecretName(m)
	live, err := c.secretsLister.Secrets(m.Namespace).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s from the cache: %w", name, err)
	}
	keys := make(map[string][]byte, len(resources.GeneratedKeys))
	var regenerated []string
	for _, k := range resources.GeneratedKeys {
		if live != nil && resources.ValidKey(live.Data[k]) {
			keys[k] = live.Data[k]
			continue
		}
		v, err := resources.NewKey(c.random)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", k, err)
		}
		keys[k] = []byte(v)
		if live != nil {
			regenerated = append(regenerated, k)
		}
	}
	secret, err := ensure(ctx, c, m, c.secrets, resources.NewAPISecret(m, keys))
	if err == nil && len(regenerated) > 0 {
		c.recorder.Eventf(m, corev1.EventTypeWarning, ReasonKeyGenerated,
			"Secret %s lacked %s; generated new values", name, strings.Join(regenerated, ", "))
	}
	return secret, err
}

// problems sorts the errors of one sync.
type problems struct {
	// conflicts names the objects ("Deployment x-api") whose name is taken by an object the
	// Monocle does not control.
	conflicts []string
	// failures are errors the user or an admin must look at (API errors other than races).
	failures []error
	// races counts write races with the API server (a stale resourceVersion, an object
	// created since the cache last saw it), which a retry resolves.
	races int
}

func classify(errs []error) problems {
	var p problems
	for _, err := range errs {
		var conflict *conflictError
		switch {
		case errors.As(err, &conflict):
			p.conflicts = append(p.conflicts, conflict.kind+" "+conflict.name)
		case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
			p.races++
		default:
			p.failures = append(p.failures, err)
		}
	}
	sort.Strings(p.conflicts)
	return p
}

// transientOnly reports whether the sync met only write races.
func (p problems) transientOnly() bool {
	return p.races > 0 && len(p.conflicts) == 0 && len(p.failures) == 0
}
