package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/util/retry"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// configFor is a small valid config.yaml; each variant has other idents, so a new variant
// is a config change that needs an update-idents Job.
func configFor(variant int) string {
	return fmt.Sprintf(`workspaces:
  - name: demo
    crawlers: []
    idents:
      - ident: user-%d
        aliases:
          - github.com/user-%d
`, variant, variant)
}

func newMonocle(ns, name string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       monoclev1alpha1.MonocleSpec{Config: configFor(0)},
	}
}

func createMonocle(ctx context.Context, ns, name string) error {
	_, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Create(ctx, newMonocle(ns, name), metav1.CreateOptions{})
	return err
}

// editMonocle applies edit to the live Monocle, retrying on conflict.
func editMonocle(ctx context.Context, ns, name string, edit func(*monoclev1alpha1.Monocle)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(m)
		_, err = env.Monocles.MonocleV1alpha1().Monocles(ns).Update(ctx, m, metav1.UpdateOptions{})
		return err
	})
}

// everyMonocle returns nil once the Monocle name of each of namespaces passes check, or the
// first error, prefixed with its namespace.
func everyMonocle(ctx context.Context, namespaces []string, name string, check func(*monoclev1alpha1.Monocle) error) error {
	for _, ns := range namespaces {
		m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := check(m); err != nil {
			return fmt.Errorf("%s: %w", ns, err)
		}
	}
	return nil
}

// converged returns nil when the operator has caught up with m: Ready is True for the
// current generation and nothing is degraded.
func converged(m *monoclev1alpha1.Monocle) error {
	if m.Status.ObservedGeneration != m.Generation {
		return fmt.Errorf("observedGeneration %d, generation %d", m.Status.ObservedGeneration, m.Generation)
	}
	for _, want := range []struct {
		cond   string
		status metav1.ConditionStatus
	}{
		{monoclev1alpha1.ConditionReady, metav1.ConditionTrue},
		{monoclev1alpha1.ConditionDegraded, metav1.ConditionFalse},
		{monoclev1alpha1.ConditionPaused, metav1.ConditionFalse},
	} {
		c := apimeta.FindStatusCondition(m.Status.Conditions, want.cond)
		if c == nil {
			return fmt.Errorf("no %s condition", want.cond)
		}
		if c.Status != want.status || c.ObservedGeneration != m.Generation {
			return fmt.Errorf("%s is %s (%s: %s) for generation %d", want.cond, c.Status, c.Reason, c.Message, c.ObservedGeneration)
		}
	}
	return nil
}

// convergence is what waitConverged saw: when each Monocle first converged.
type convergence struct {
	readyAt map[string]time.Time
}

// durations returns how long after from each Monocle converged (0 for those that already
// had).
func (c convergence) durations(from time.Time) []time.Duration {
	var out []time.Duration
	for _, at := range c.readyAt {
		d := at.Sub(from)
		if d < 0 {
			d = 0
		}
		out = append(out, d)
	}
	return out
}

// last is when the last Monocle converged.
func (c convergence) last() time.Time {
	var l time.Time
	for _, at := range c.readyAt {
		if at.After(l) {
			l = at
		}
	}
	return l
}

// readFailure is an error of the suite's own read of the cluster, not of a Monocle: the API
// server did not answer in time, refused for load, or the connection failed (a machine busy
// with other work). A check that ends on one is retried; waitConverged tells it apart.
type readFailure struct{ err error }

func (r readFailure) Error() string { return r.err.Error() }
func (r readFailure) Unwrap() error { return r.err }

// isReadFailure reports whether err says the read did not get an answer: a deadline or a
// cancellation, an API server timeout, throttling or unavailability, or a connection refused
// or reset.
func isReadFailure(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// waitConverged polls the Monocles of namespaces (all when empty) every 250ms until every
// one that is not being deleted has converged and extra (if not nil) returns nil, or timeout
// passes; then it returns an error naming what had not converged. When the checks ended on
// the suite's own reads failing (readFailure), the error says so, with how many reads failed
// and what the last read that got an answer showed: a machine too busy to answer the harness
// is not a Monocle that did not converge.
func waitConverged(ctx context.Context, timeout time.Duration, namespaces []string, extra func(context.Context) error) (convergence, error) {
	res := convergence{readyAt: map[string]time.Time{}}
	var checks, failedReads int
	lastAnswer := "no read answered"
	inScope := func(ns string) bool {
		if len(namespaces) == 0 {
			return true
		}
		for _, n := range namespaces {
			if n == ns {
				return true
			}
		}
		return false
	}
	err := testkit.Poll(ctx, 250*time.Millisecond, timeout, "Monocles converged", func(ctx context.Context) (err error) {
		checks++
		defer func() {
			var r readFailure
			if errors.As(err, &r) {
				failedReads++
			} else if err != nil {
				lastAnswer = err.Error()
			}
		}()
		list, err := env.Monocles.MonocleV1alpha1().Monocles("").List(ctx, metav1.ListOptions{})
		var pending []string
		if err != nil {
			if isReadFailure(err) {
				return readFailure{err}
			}
			pending = append(pending, err.Error())
		} else {
			now := time.Now()
			for i := range list.Items {
				m := &list.Items[i]
				if m.DeletionTimestamp != nil || !inScope(m.Namespace) || env.track.isNamespaceDeleted(m.Namespace) {
					continue
				}
				key := m.Namespace + "/" + m.Name
				if err := converged(m); err != nil {
					delete(res.readyAt, key)
					pending = append(pending, key+": "+err.Error())
					continue
				}
				if _, ok := res.readyAt[key]; !ok {
					res.readyAt[key] = now
				}
			}
		}
		if len(pending) == 0 && extra != nil {
			if err := extra(ctx); err != nil {
				if isReadFailure(err) {
					return readFailure{err}
				}
				pending = append(pending, err.Error())
			}
		}
		if len(pending) == 0 {
			return nil
		}
		sort.Strings(pending)
		if len(pending) > 10 {
			pending = append(pending[:10], fmt.Sprintf("... and %d more", len(pending)-10))
		}
		return errors.New("\n  " + strings.Join(pending, "\n  "))
	})
	var r readFailure
	if errors.As(err, &r) {
		return res, fmt.Errorf("the harness could not read the cluster, which says nothing of the Monocles: %d of %d checks ended on a read that got no answer, the last: %v; the last check answered: %s",
			failedReads, checks, r.err, lastAnswer)
	}
	return res, err
}

// waitLeader waits until one of ops holds the lease and returns it.
func waitLeader(ctx context.Context, timeout time.Duration, ops []*operator) (*operator, error) {
	ids := make([]string, len(ops))
	for i, o := range ops {
		id, err := o.identity(30 * time.Second)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	i, err := testkit.WaitLeader(ctx, env.Kube, "default", "monocle-operator", timeout, ids...)
	if err != nil {
		return nil, err
	}
	return ops[i], nil
}

// configApplied checks that the ConfigMap of Monocle ns/name holds config variant and, when
// wantJob, that the update-idents Job for that config has succeeded.
func configApplied(ctx context.Context, ns, name string, variant int, wantJob bool) error {
	cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name+"-api", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cm.Data[resources.ConfigKey] != configFor(variant) {
		return fmt.Errorf("ConfigMap %s/%s-api does not hold config variant %d", ns, name, variant)
	}
	if !wantJob {
		return nil
	}
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	u := m.Status.UpdateIdents
	if u == nil || u.ConfigHash != m.Status.ConfigHash || u.Phase != monoclev1alpha1.JobSucceeded {
		return fmt.Errorf("Monocle %s/%s: update-idents for config %s is %+v", ns, name, m.Status.ConfigHash, u)
	}
	return nil
}
