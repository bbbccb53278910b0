package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// placementPriorityClass is the PriorityClass TestPlacement's pods run with.
const placementPriorityClass = "monocle-placement"

// testPlacement is a placement of component's pods that the kwok node satisfies: its
// nodeSelector and required node affinity name one of the node's labels each (a different
// one per component), the toleration and spread constraint let the pods schedule on the one
// node, and the pod label and annotation are named after component.
func testPlacement(component, nodeLabel string) monoclev1alpha1.PodPlacement {
	key, value, _ := strings.Cut(nodeLabel, "=")
	return monoclev1alpha1.PodPlacement{
		NodeSelector: map[string]string{key: value},
		Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "monocle-" + component,
			Effect: corev1.TaintEffectNoSchedule}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "type", Operator: corev1.NodeSelectorOpIn, Values: []string{"kwok"}},
			}}},
		}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{resources.InstanceLabel: "m", resources.ComponentLabel: component}}}},
		PriorityClassName: placementPriorityClass,
		PodLabels:         map[string]string{"team": "monocle-" + component},
		PodAnnotations:    map[string]string{"example.com/placed-by": component},
	}
}

// placedMonocle is the Monocle "m" of day2Monocle's config and Secret, with a placement for
// each component and the Jobs, and an image pull Secret.
func placedMonocle() *monoclev1alpha1.Monocle {
	m := &monoclev1alpha1.Monocle{
		TypeMeta:   metav1.TypeMeta{APIVersion: monoclev1alpha1.SchemeGroupVersion.String(), Kind: "Monocle"},
		ObjectMeta: metav1.ObjectMeta{Name: "m"},
	}
	m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	m.Spec.Config = "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: \"2024-01-01\"\n        provider:\n          github_organization: change-metrics\n          github_token: GITHUB_TOKEN\n"
	m.Spec.API.PodPlacement = testPlacement(resources.ComponentAPI, "type=kwok")
	m.Spec.Crawler.PodPlacement = testPlacement(resources.ComponentCrawler, "kubernetes.io/os=linux")
	m.Spec.Elasticsearch.PodPlacement = testPlacement(resources.ComponentElastic, "kubernetes.io/arch=amd64")
	m.Spec.Jobs.PodPlacement = testPlacement(resources.ComponentUpdateIdents, "kubernetes.io/hostname="+localcluster.NodeName)
	m.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mirror"}}
	return m
}

// placementErrors lists how the pod template tpl differs from placement p with the image
// pull Secrets pullSecrets.
func placementErrors(tpl corev1.PodTemplateSpec, p monoclev1alpha1.PodPlacement, pullSecrets []corev1.LocalObjectReference) []string {
	var errs []string
	check := func(field string, got, want any) {
		if !equality.Semantic.DeepEqual(got, want) {
			errs = append(errs, fmt.Sprintf("%s = %v, want %v", field, got, want))
		}
	}
	s := tpl.Spec
	check("nodeSelector", s.NodeSelector, p.NodeSelector)
	check("tolerations", s.Tolerations, p.Tolerations)
	check("affinity", s.Affinity, p.Affinity)
	check("topologySpreadConstraints", s.TopologySpreadConstraints, p.TopologySpreadConstraints)
	check("priorityClassName", s.PriorityClassName, p.PriorityClassName)
	check("imagePullSecrets", s.ImagePullSecrets, pullSecrets)
	for k, v := range p.PodLabels {
		check("label "+k, tpl.Labels[k], v)
	}
	for k, v := range p.PodAnnotations {
		check("annotation "+k, tpl.Annotations[k], v)
	}
	return errs
}

// podErrors lists how a Pod differs from placement p: its template fields (placementErrors),
// and the scheduling that follows from them (bound to the kwok node, priority resolved from
// the PriorityClass by admission).
func podErrors(pod corev1.Pod, p monoclev1alpha1.PodPlacement, pullSecrets []corev1.LocalObjectReference) []string {
	// The DefaultTolerationSeconds admission plugin adds tolerations of its own to Pods.
	spec := *pod.Spec.DeepCopy()
	spec.Tolerations = slices.DeleteFunc(spec.Tolerations, func(t corev1.Toleration) bool {
		return t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable
	})
	if len(spec.Tolerations) == 0 {
		spec.Tolerations = nil
	}
	errs := placementErrors(corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: spec}, p, pullSecrets)
	if pod.Spec.NodeName != localcluster.NodeName {
		errs = append(errs, fmt.Sprintf("not scheduled on %s (node %q, phase %s)", localcluster.NodeName, pod.Spec.NodeName, pod.Status.Phase))
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 1000 {
		errs = append(errs, fmt.Sprintf("priority %v, want 1000 from PriorityClass %s", pod.Spec.Priority, placementPriorityClass))
	}
	return errs
}

// expectPodsPlaced waits until every pod of the component of Monocle "m" in ns (by its
// selector labels) is placed by p, and there is at least one.
func expectPodsPlaced(t *testing.T, ns, component string, p monoclev1alpha1.PodPlacement, pullSecrets []corev1.LocalObjectReference) {
	t.Helper()
	selector := labels.SelectorFromSet(map[string]string{resources.InstanceLabel: "m", resources.ComponentLabel: component}).String()
	testkit.Eventually(t, 250*time.Millisecond, 90*time.Second, component+" pods placed", func() error {
		pods, err := env.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return fmt.Errorf("no %s pod", component)
		}
		for _, pod := range pods.Items {
			if errs := podErrors(pod, p, pullSecrets); len(errs) > 0 {
				return fmt.Errorf("pod %s: %s", pod.Name, strings.Join(errs, "; "))
			}
		}
		return nil
	})
}

// workloadTemplates returns the pod templates of the API and crawler Deployments and of the
// Elasticsearch StatefulSet of Monocle "m" in ns, by component.
func workloadTemplates(t *testing.T, ns string) map[string]corev1.PodTemplateSpec {
	t.Helper()
	ctx := context.Background()
	out := map[string]corev1.PodTemplateSpec{}
	for component, name := range map[string]string{resources.ComponentAPI: "m-api", resources.ComponentCrawler: "m-crawler"} {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[component] = d.Spec.Template
	}
	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out[resources.ComponentElastic] = sts.Spec.Template
	return out
}

// waitTemplates waits until the workloads' pod templates (workloadTemplates) pass check,
// one error per failing component.
func waitTemplates(t *testing.T, ns, what string, check func(component string, tpl corev1.PodTemplateSpec) []string) {
	t.Helper()
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, what, func() error {
		var errs []string
		for component, tpl := range workloadTemplates(t, ns) {
			if e := check(component, tpl); len(e) > 0 {
				errs = append(errs, component+": "+strings.Join(e, "; "))
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "\n"))
		}
		return nil
	})
}

// TestPlacement places every pod of a Monocle on the real control plane: the placement of
// spec.api, spec.crawler, spec.elasticsearch and spec.jobs, and spec.imagePullSecrets, reach
// the Deployments, the StatefulSet, the update-idents Job and their Pods (scheduled by the
// real scheduler on the kwok node, with the priority of the PriorityClass); a hand edit of a
// Deployment's placement is put back, while the annotation kubectl rollout restart adds stays;
// fields removed from the Monocle leave the workloads; the operator's own labels and
// annotations are refused at admission, naming the field.
func TestPlacement(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "placement"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "priorityclass", placementPriorityClass, "--value=1000", "--description=TestPlacement")
	t.Cleanup(func() {
		_, _ = env.Kubectl.Run(context.Background(), "delete", "priorityclass", placementPriorityClass)
	})
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	env.Kubectl.Must(t, "create", "secret", "docker-registry", "mirror", "-n", ns,
		"--docker-server=registry.example.com", "--docker-username=monocle", "--docker-password=not-a-password")

	m := placedMonocle()
	manifest, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := env.Kubectl.RunStdin(ctx, string(manifest), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	placements := map[string]monoclev1alpha1.PodPlacement{
		resources.ComponentAPI:     m.Spec.API.PodPlacement,
		resources.ComponentCrawler: m.Spec.Crawler.PodPlacement,
		resources.ComponentElastic: m.Spec.Elasticsearch.PodPlacement,
	}

	t.Run("every pod is placed", func(t *testing.T) {
		waitTemplates(t, ns, "workloads placed", func(component string, tpl corev1.PodTemplateSpec) []string {
			return placementErrors(tpl, placements[component], m.Spec.ImagePullSecrets)
		})
		for component, p := range placements {
			expectPodsPlaced(t, ns, component, p, m.Spec.ImagePullSecrets)
		}

		// A config change runs update-idents, whose Job spec.jobs places.
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"config": m.Spec.Config + "    idents:\n      - ident: Jane\n        aliases: [github.com/jane]\n"}})
		patchMonocle(t, ns, string(patch))
		// The Job is created once the API runs the new config (status names it before).
		var job *batchv1.Job
		testkit.Eventually(t, 250*time.Millisecond, 90*time.Second, "update-idents Job", func() error {
			u := getMonocle(t, ns, "m").Status.UpdateIdents
			if u == nil || u.Name == "" {
				return fmt.Errorf("no update-idents Job named in status")
			}
			var err error
			job, err = env.Kube.BatchV1().Jobs(ns).Get(ctx, u.Name, metav1.GetOptions{})
			return err
		})
		if errs := placementErrors(job.Spec.Template, m.Spec.Jobs.PodPlacement, m.Spec.ImagePullSecrets); len(errs) > 0 {
			t.Errorf("Job %s: %s", job.Name, strings.Join(errs, "; "))
		}
		expectPodsPlaced(t, ns, resources.ComponentUpdateIdents, m.Spec.Jobs.PodPlacement, m.Spec.ImagePullSecrets)
	})

	t.Run("hand edits are put back", func(t *testing.T) {
		// kubectl rollout restart adds an annotation of its own, which the operator keeps.
		env.Kubectl.Must(t, "rollout", "restart", "-n", ns, "deployment/m-api")
		env.Kubectl.Must(t, "patch", "-n", ns, "deployment/m-api", "--type=merge", "-p",
			`{"spec":{"template":{"spec":{"nodeSelector":{"by":"hand"},"tolerations":[{"operator":"Exists"}]}}}}`)
		env.Kubectl.Must(t, "patch", "-n", ns, "statefulset/m-elastic", "--type=merge", "-p",
			`{"spec":{"template":{"spec":{"priorityClassName":"system-cluster-critical","imagePullSecrets":[{"name":"other"}]}}}}`)
		env.Kubectl.Must(t, "patch", "-n", ns, "deployment/m-crawler", "--type=json", "-p",
			`[{"op":"remove","path":"/spec/template/spec/affinity"},{"op":"remove","path":"/spec/template/metadata/labels/team"}]`)
		waitTemplates(t, ns, "hand edits put back", func(component string, tpl corev1.PodTemplateSpec) []string {
			return placementErrors(tpl, placements[component], m.Spec.ImagePullSecrets)
		})
		api, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := api.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"]; !ok {
			t.Errorf("the annotation of kubectl rollout restart was removed: %v", api.Spec.Template.Annotations)
		}
		expectPodsPlaced(t, ns, resources.ComponentAPI, placements[resources.ComponentAPI], m.Spec.ImagePullSecrets)
	})

	t.Run("fields removed from the Monocle leave the workloads", func(t *testing.T) {
		env.Kubectl.Must(t, "patch", "-n", ns, "monocle/m", "--type=json", "-p", `[
			{"op":"remove","path":"/spec/api/nodeSelector"},
			{"op":"remove","path":"/spec/api/tolerations"},
			{"op":"remove","path":"/spec/api/podLabels"},
			{"op":"remove","path":"/spec/elasticsearch/podAnnotations"},
			{"op":"remove","path":"/spec/crawler/priorityClassName"},
			{"op":"remove","path":"/spec/imagePullSecrets"}]`)
		left := maps.Clone(placements)
		api := left[resources.ComponentAPI]
		api.NodeSelector, api.Tolerations, api.PodLabels = nil, nil, nil
		elastic := left[resources.ComponentElastic]
		elastic.PodAnnotations = nil
		crawler := left[resources.ComponentCrawler]
		crawler.PriorityClassName = ""
		left[resources.ComponentAPI], left[resources.ComponentElastic], left[resources.ComponentCrawler] = api, elastic, crawler
		removed := map[string][2]string{
			resources.ComponentAPI:     {"label", "team"},
			resources.ComponentElastic: {"annotation", "example.com/placed-by"},
		}
		waitTemplates(t, ns, "removed fields gone", func(component string, tpl corev1.PodTemplateSpec) []string {
			errs := placementErrors(tpl, left[component], nil)
			switch r := removed[component]; {
			case r[0] == "label" && tpl.Labels[r[1]] != "":
				errs = append(errs, "label "+r[1]+" left")
			case r[0] == "annotation" && tpl.Annotations[r[1]] != "":
				errs = append(errs, "annotation "+r[1]+" left")
			}
			return errs
		})
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	})

	t.Run("the operator's keys are refused at admission", func(t *testing.T) {
		for _, tc := range []struct{ name, spec, field, message string }{
			{"instance label", `{"api":{"podLabels":{"app.kubernetes.io/instance":"other"}}}`, "spec.api.podLabels", "operator's own labels"},
			{"component label", `{"crawler":{"podLabels":{"app.kubernetes.io/component":"api"}}}`, "spec.crawler.podLabels", "operator's own labels"},
			{"managed-by label", `{"elasticsearch":{"podLabels":{"app.kubernetes.io/managed-by":"me"}}}`, "spec.elasticsearch.podLabels", "operator's own labels"},
			{"operator annotation", `{"jobs":{"podAnnotations":{"monocle.change-metrics.io/secret-hash":"x"}}}`, "spec.jobs.podAnnotations", "monocle.change-metrics.io/ prefix"},
			{"Elasticsearch placement with external", `{"elasticsearch":{"external":{"url":"http://es.example.com:9200"},"nodeSelector":{"a":"b"}}}`,
				"spec.elasticsearch", "place the bundled Elasticsearch's pod"},
		} {
			manifest := fmt.Sprintf(`{"apiVersion":"monocle.monocle.change-metrics.io/v1alpha1","kind":"Monocle","metadata":{"name":"refused"},"spec":%s}`, tc.spec)
			out, err := env.Kubectl.RunStdin(ctx, manifest, "create", "-n", ns, "-f", "-")
			if err == nil {
				t.Errorf("%s: accepted: %s", tc.name, out)
				env.Kubectl.Must(t, "delete", "-n", ns, "monocle/refused")
				continue
			}
			if !strings.Contains(out, tc.field) || !strings.Contains(out, tc.message) {
				t.Errorf("%s: refused without naming %s (%q): %s", tc.name, tc.field, tc.message, out)
			}
		}
		// An update of the running Monocle is refused the same way, and changes nothing.
		before := getMonocle(t, ns, "m").Generation
		out, err := env.Kubectl.Run(ctx, "patch", "-n", ns, "monocle/m", "--type=merge", "-p",
			`{"spec":{"api":{"podLabels":{"app.kubernetes.io/name":"other"}}}}`)
		if err == nil || !strings.Contains(out, "spec.api.podLabels") {
			t.Errorf("patch of podLabels with app.kubernetes.io/name: %v: %s", err, out)
		}
		if after := getMonocle(t, ns, "m").Generation; after != before {
			t.Errorf("the refused patch changed the Monocle (generation %d → %d)", before, after)
		}
	})
}
