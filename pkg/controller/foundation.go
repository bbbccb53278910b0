package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// foundation is what the foundation phase hands to the later ones.
type foundation struct {
	// apiSecret is the Secret "<name>-api" (nil until the generated keys are there).
	apiSecret *corev1.Secret
	// config is the config.yaml the pods are to run; configHash is its hash, "" when there is
	// none.
	config     configState
	configHash string
	// secrets says which components get every variable they need.
	secrets secretsCheck
	// proxy is the proxy Secret the pods mount, as built (nil when the target needs no
	// proxy, or when it could not be built).
	proxy *corev1.Secret
}

// proxyData is the proxy Secret's data, nil when there is none.
func (f foundation) proxyData() map[string][]byte {
	if f.proxy == nil {
		return nil
	}
	return f.proxy.Data
}

// proxyReady reports whether the pods can reach the target: it needs no proxy, or the proxy
// Secret is there.
func (f foundation) proxyReady(st *syncState) bool {
	return st.cluster.resolved && (!st.cluster.target.NeedsProxy() || f.proxy != nil)
}

// configReady reports whether there is a config for the pods to run.
func (f foundation) configReady() bool { return f.config.config != "" }

// ensureFoundation is the phase that makes what the workloads stand on: the generated keys,
// the Secret "<name>-api", the config, the Services, the Elasticsearch StatefulSet and its
// storage, the disruption budget, the NetworkPolicy, the exposure, the monitoring and the
// backup volume; with an Elasticsearch of elasticsearchRef or external, the proxy Secret in
// place of the bundled Elasticsearch's objects. It sets ConfigValid, SecretsReady, SpecAccepted, OIDCReady, StorageReady,
// Exposed and Monitored.
//
// The keys' backup Secret comes first, alone: it is a new Monocle's first request, so when the
// API server cannot serve, the sync stops having sent one request (see syncState.fail). The
// objects that need nothing of each other follow at once, the Secret "<name>-api" among them:
// a new Monocle's creates then take about one request's time rather than the sum of them.
func (c *Controller) ensureFoundation(ctx context.Context, st *syncState) foundation {
	m := st.m
	keys, err := c.ensureKeys(ctx, m, st.adoption.adopting)
	st.fail(err)
	var f foundation
	st.run(ctx,
		func(ctx context.Context) (func(*syncState), []error) {
			if keys.keys == nil {
				return nil, nil
			}
			secret, err := c.ensureAPISecret(ctx, m, keys, st.adoption.adopting)
			return func(*syncState) { f.apiSecret = secret }, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			cfg, err := c.ensureConfig(ctx, m)
			return func(st *syncState) {
				f.config = cfg
				st.setCondition(cfg.condition)
				if f.configReady() {
					f.configHash = resources.ConfigHash(cfg.config)
					st.status.ConfigHash = f.configHash
				}
				if cfg.source != "" {
					st.status.ConfigSource = cfg.source
				}
			}, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			// A Service is switched from the earlier operator's selector once its component
			// serves from pods with the instance's labels (serviceClient); the workloads are
			// as the sync observed them, as the previous sync left them.
			if !st.cluster.target.Bundled() {
				return nil, nil
			}
			_, err := c.serviceClient(statefulSetServes(m, st.observed.elastic)).Ensure(ctx, c.recorder, m, resources.NewElasticService(m))
			return nil, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			return c.ensureElasticsearch(ctx, st)
		},
		func(ctx context.Context) (func(*syncState), []error) {
			_, err := c.serviceClient(deploymentServes(m, st.observed.api, resources.ComponentAPI)).Ensure(ctx, c.recorder, m, resources.NewAPIService(m))
			return nil, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			return nil, []error{c.ensureAPIDisruptionBudget(ctx, m)}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			_, err := c.netpols.Ensure(ctx, c.recorder, m, resources.NewNetworkPolicy(m, c.operatorNamespace))
			return nil, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			exposed, errs := c.ensureExposure(ctx, m)
			return func(st *syncState) {
				st.setCondition(exposed.condition)
				st.status.URL = statusURL(m, exposed.assignedURL)
			}, errs
		},
		func(ctx context.Context) (func(*syncState), []error) {
			monitored, err := c.ensureMonitoring(ctx, m)
			return func(st *syncState) { st.setCondition(monitored) }, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			if !st.cluster.target.Bundled() {
				return nil, nil
			}
			return nil, []error{c.ensureBackupClaim(ctx, m)}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			proxy, err := c.ensureProxySecret(ctx, st)
			return func(*syncState) { f.proxy = proxy }, []error{err}
		},
	)

	f.secrets, err = c.checkSecrets(ctx, m, f.config.parsed, f.apiSecret)
	st.fail(err)
	ca, err := c.checkTrustedCA(ctx, m)
	st.fail(err)
	f.secrets = f.secrets.withTrustedCA(ca)
	proxyCredentials, err := c.checkProxyCredentials(ctx, m)
	st.fail(err)
	f.secrets = f.secrets.withProxyCredentials(proxyCredentials)
	st.setCondition(f.secrets.condition)
	if oidc := day2.OIDCCondition(m, f.config.parsed); oidc != nil {
		st.setCondition(*oidc)
	} else if f.config.parsed != nil {
		// The config in force has no OIDC auth_provider.
		st.removeCondition(monoclev1alpha1.ConditionOIDCReady)
	}
	return f
}

// ensureElasticsearch is the foundation step of the Elasticsearch StatefulSet and its
// storage: the StatefulSet is written only while the spec's Elasticsearch is one the operator
// accepts (SpecAccepted), and the volume follows storageSize (StorageReady).
func (c *Controller) ensureElasticsearch(ctx context.Context, st *syncState) (func(*syncState), []error) {
	m := st.m
	if !st.cluster.target.Bundled() {
		// Nothing of the bundled Elasticsearch, whose fields admission refuses with a
		// cluster of one's own; an existing StatefulSet or volume is never deleted.
		spec := day2.ElasticSpecCondition(m, nil)
		return func(st *syncState) {
			st.setCondition(spec)
			st.removeCondition(monoclev1alpha1.ConditionStorageReady)
		}, nil
	}
	live := st.observed.elastic
	var errs []error
	spec := day2.ElasticSpecCondition(m, live)
	// The node runs with security on: it is written once its users are (the resolve phase),
	// or it would lock out the pods and the operator.
	if spec.Status == metav1.ConditionTrue && st.cluster.resolved {
		desired := resources.NewElasticStatefulSet(m, st.adoption.volume, st.hibernation.Stopped.Elastic, st.cluster.usersHash)
		if !st.rollout.holdsStatefulSet(live, desired) {
			var err error
			live, err = c.statefulSets.Ensure(ctx, c.recorder, m, desired)
			errs = append(errs, err)
		}
	} else {
		st.rollout.unknown("StatefulSet " + resources.ElasticName(m))
	}
	storage, err := c.ensureStorage(ctx, m, st.adoption.volume)
	errs = append(errs, err)
	return func(st *syncState) {
		st.elastic = live
		st.setCondition(spec)
		st.setCondition(storage)
	}, errs
}

// ensureProxySecret keeps the proxy Secret "<name>-elastic-proxy" while the target needs the
// proxy, and returns it as built (nil otherwise); it deletes the Secret once the target no
// longer needs it, or once the Monocle may no longer use it (st.cluster.refused: a
// cross-namespace reference without its grant). The Secret holds the cluster's credentials,
// so it is written only while the target is ready (st.cluster.ready: resolved, Ready, and used
// by no other Monocle); until then it is returned as built but not written, which lets a
// change that starts no pod (scaling to zero) through, and a Secret written before is left as
// it is. A target the proxy cannot serve is an error, and the Secret is left as it is, as it
// is while the target is not resolved.
func (c *Controller) ensureProxySecret(ctx context.Context, st *syncState) (*corev1.Secret, error) {
	m := st.m
	if st.cluster.refused {
		return nil, c.secrets.Delete(ctx, c.recorder, m, resources.ProxySecretName(m), "the Monocle may not use the Elasticsearch of its elasticsearchRef")
	}
	if !st.cluster.resolved {
		return nil, nil
	}
	if !st.cluster.target.NeedsProxy() {
		return nil, c.secrets.Delete(ctx, c.recorder, m, resources.ProxySecretName(m), "the Elasticsearch needs neither TLS nor credentials")
	}
	desired, err := resources.NewProxySecret(m, st.cluster.target)
	if err != nil {
		return nil, fmt.Errorf("building Secret %s: %w", resources.ProxySecretName(m), err)
	}
	if !st.cluster.ready {
		return desired, nil
	}
	if _, err := c.secrets.Ensure(ctx, c.recorder, m, desired); err != nil {
		return nil, err
	}
	return desired, nil
}
