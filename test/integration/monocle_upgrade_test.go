package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestMonocleUpgrade: changing a Monocle's image takes a snapshot first (with backups), stops
// the crawler, replaces the API so that never two API versions run, starts the new crawler
// only once the new API is ready, and reports each phase; a downgrade across config-index
// versions is refused and changes nothing.
func TestMonocleUpgrade(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "monocle-upgrade"
	const from, to = "quay.io/change-metrics/monocle:1.11.1", "quay.io/change-metrics/monocle:1.11.2"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	env.Elastic.SetIndices(ns, "m", "monocle.config", "monocle.changes.1.demo")
	manifest := strings.Replace(day2Monocle, "spec:\n", "spec:\n  image: "+from+"\n  backup: {}\n  api: {replicas: 2}\n", 1)
	if out, err := env.Kubectl.RunStdin(context.Background(), manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	waitCondition(t, ns, "m", "Upgraded", metav1.ConditionTrue, "UpToDate")

	pods, err := testkit.RecordUpgrade(context.Background(), env.Kube, ns)
	if err != nil {
		t.Fatal(err)
	}
	defer pods.Stop()
	patchMonocle(t, ns, `{"spec":{"image":"`+to+`"}}`)
	var phases []monoclev1alpha1.UpgradePhase
	testkit.Eventually(t, 50*time.Millisecond, 2*time.Minute, "the upgrade done", func() error {
		st := getMonocle(t, ns, "m").Status.Upgrade
		if st == nil {
			return fmt.Errorf("no status.upgrade")
		}
		if len(phases) == 0 || phases[len(phases)-1] != st.Phase {
			phases = append(phases, st.Phase)
		}
		if st.Phase != monoclev1alpha1.UpgradeSucceeded {
			return fmt.Errorf("phase %s", st.Phase)
		}
		return nil
	})
	t.Logf("phases seen: %v", phases)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	for _, p := range pods.Problems(to) {
		t.Error(p)
	}
	st := getMonocle(t, ns, "m").Status.Upgrade
	if st.From != from || st.To != to || !strings.HasPrefix(st.Snapshot, "pre-upgrade-") {
		t.Errorf("status.upgrade = %+v", st)
	}
	var snapshotted bool
	for _, s := range env.Elastic.Snapshots(ns, "m", resources.BackupRepositoryName) {
		snapshotted = snapshotted || (s.Name == st.Snapshot && s.State == testkit.SnapshotSuccess)
	}
	if !snapshotted {
		t.Errorf("no successful snapshot %s in the repository", st.Snapshot)
	}
	events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason=Upgrading", "-o", "custom-columns=MSG:.message")
	for _, phase := range []string{"BackingUp", "StoppingCrawler", "ReplacingAPI", "StartingCrawler"} {
		if !strings.Contains(events, phase) {
			t.Errorf("no Upgrading event for phase %s:\n%s", phase, events)
		}
	}
	waitCondition(t, ns, "m", "Upgraded", metav1.ConditionTrue, "UpgradeSucceeded")
	waitEvent(t, ns, "UpgradeSucceeded", to)
	d, err := env.Kube.AppsV1().Deployments(ns).Get(context.Background(), "m-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Strategy.Type != "RollingUpdate" {
		t.Errorf("after the upgrade the API's strategy is %s, want RollingUpdate back", d.Spec.Strategy.Type)
	}

	// A downgrade across config-index versions: refused, nothing changes.
	patchMonocle(t, ns, `{"spec":{"image":"quay.io/change-metrics/monocle:1.10.0"}}`)
	refused := waitCondition(t, ns, "m", "Upgraded", metav1.ConditionFalse, "MonocleDowngrade")
	if !strings.Contains(refused.Message, "1.10.0") {
		t.Errorf("Upgraded message %q does not name the image", refused.Message)
	}
	for _, name := range []string{"m-api", "m-crawler"} {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != to {
			t.Errorf("%s runs %s after a refused downgrade, want %s", name, img, to)
		}
	}
}
