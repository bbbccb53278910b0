package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// quotaLimits is a requests and limits block with CPU, memory and ephemeral storage, as a
// namespace whose ResourceQuota requires limits wants of every container (flow YAML).
const quotaLimits = "{requests: {cpu: 10m, memory: 64Mi, ephemeral-storage: 64Mi}, limits: {cpu: 500m, memory: 512Mi, ephemeral-storage: 1Gi}}"

// TestMonoclesInAQuotaNamespace: in a namespace under Pod Security restricted whose
// ResourceQuota requires CPU, memory and ephemeral-storage limits of every container (and no
// LimitRange fills them in), a bundled Monocle with backups, the exporter and an
// update-idents Job, and a Monocle on an ECK cluster over HTTPS through the proxy sidecar,
// each with every resources field set, become Ready, run their Job, and no pod of theirs is
// refused.
func TestMonoclesInAQuotaNamespace(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := t.Context()
	const ns = "quota"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	hard := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{
		corev1.ResourceLimitsCPU: "40", corev1.ResourceLimitsMemory: "40Gi", corev1.ResourceLimitsEphemeralStorage: "100Gi",
		corev1.ResourceRequestsCPU: "40", corev1.ResourceRequestsMemory: "40Gi",
	} {
		hard[name] = resource.MustParse(q)
	}
	if _, err := env.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "company"}, Spec: corev1.ResourceQuotaSpec{Hard: hard},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	installECK(t)
	createECK(t, ns, "Ready", "green")

	author := tenant(t, ns)
	author.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	every := "  api: {resources: " + quotaLimits + "}\n  crawler: {resources: " + quotaLimits + "}\n  jobs: {resources: " + quotaLimits + "}\n"
	bundled := strings.Replace(day2Monocle, "spec:\n", "spec:\n"+every+"  backup: {}\n"+
		"  elasticsearch: {resources: {requests: {cpu: 100m, memory: 1Gi, ephemeral-storage: 64Mi}, limits: {cpu: '1', memory: 1Gi, ephemeral-storage: 4Gi}},"+
		" initResources: "+quotaLimits+", exporter: {resources: "+quotaLimits+"}, proxy: {resources: "+quotaLimits+"}}\n", 1)
	onECK := strings.Replace(strings.Replace(day2Monocle, "name: m\n", "name: on-eck\n", 1), "spec:\n", "spec:\n"+every+
		"  elasticsearch: {elasticsearchRef: {name: es}, proxy: {resources: "+quotaLimits+"}}\n", 1)
	for _, manifest := range []string{bundled, onECK} {
		if out, err := author.RunStdin(ctx, manifest, "apply", "-n", ns, "-f", "-"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	for _, name := range []string{"m", "on-eck"} {
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=180s", "monocle/"+name)
	}

	// A config change runs each Monocle's update-idents Job, with the proxy sidecar.
	config := `workspaces:
  - name: demo
    crawlers: []
    idents:
      - ident: Jane Doe
        aliases: [github.com/jane-doe]
`
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"config": config}})
	for _, name := range []string{"m", "on-eck"} {
		author.Must(t, "patch", "-n", ns, "monocle/"+name, "--type=merge", "-p="+string(patch))
	}
	for _, name := range []string{"m", "on-eck"} {
		testkit.Eventually(t, 250*time.Millisecond, 120*time.Second, name+"'s update-idents succeeded", func() error {
			m := getMonocle(t, ns, name)
			if u := m.Status.UpdateIdents; u == nil || u.Phase != monoclev1alpha1.JobSucceeded {
				return fmt.Errorf("status.updateIdents = %+v", u)
			}
			return nil
		})
	}
	events, err := env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "FailedCreate" || strings.Contains(e.Message, "exceeded quota") || strings.Contains(e.Message, "must specify") {
			t.Errorf("%s %s: %s %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			if c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() || c.Resources.Limits.StorageEphemeral().IsZero() {
				t.Errorf("pod %s, container %s: limits %v", p.Name, c.Name, c.Resources.Limits)
			}
		}
	}
}
