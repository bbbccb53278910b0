package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestContestedToleration plays a policy engine against the operator on the real control
// plane, whose managedFields are real: a second writer with its own field manager, "kyverno",
// puts a toleration back into the API Deployment whenever it lacks it, as Kyverno's
// background mutation would. Over about a minute the operator removes it only a few times
// (it would otherwise remove it after every one of the writer's patches), and Degraded, with
// reason FieldContested, and the Warning event FieldContested name the Deployment, the field
// and "kyverno".
func TestContestedToleration(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := t.Context()
	ns := "contested"
	startDay2(t, ns)

	toleration := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	patch := []byte(`{"spec":{"template":{"spec":{"tolerations":[{"key":"spot","operator":"Exists","effect":"NoSchedule"}]}}}}`)
	// The writer checks the Deployment every 100 ms and patches the toleration back in as
	// "kyverno"; removals counts the times it found the operator had removed it.
	var removals, patches atomic.Int64
	writer, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait.UntilWithContext(writer, func(ctx context.Context) {
			d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
			if err != nil || slices.Contains(d.Spec.Template.Spec.Tolerations, toleration) {
				return
			}
			if patches.Load() > 0 {
				removals.Add(1)
			}
			if _, err := env.Kube.AppsV1().Deployments(ns).Patch(ctx, "m-api", types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: "kyverno"}); err == nil {
				patches.Add(1)
			}
		}, 100*time.Millisecond)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})

	const field = "spec.template.spec.tolerations"
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionDegraded, metav1.ConditionTrue, reasons.FieldContested)
	time.Sleep(time.Minute)
	stop()
	<-done
	// Two removals before the contest, then one when the 30 s back-off ends, and the next
	// after 60 s more.
	if n := removals.Load(); n < 2 || n > 5 {
		t.Errorf("the operator removed the toleration %d times over about a minute (%d patches of the writer): want 2 to 5", n, patches.Load())
	} else {
		t.Logf("the operator removed the toleration %d times over about a minute (%d patches of the writer)", n, patches.Load())
	}

	cond := waitCondition(t, ns, "m", monoclev1alpha1.ConditionDegraded, metav1.ConditionTrue, reasons.FieldContested)
	named := fmt.Sprintf(`Deployment m-api: %s set back by field manager "kyverno"`, field)
	if !strings.Contains(cond.Message, named) {
		t.Errorf("Degraded message %q does not say %q", cond.Message, named)
	}
	events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason="+reasons.FieldContested,
		"-o", "custom-columns=TYPE:.type,MSG:.message")
	if !strings.Contains(events, "Warning") || !strings.Contains(events, named) {
		t.Errorf("FieldContested events do not say %q:\n%s", named, events)
	}
}
