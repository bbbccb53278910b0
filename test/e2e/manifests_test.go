package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// These tests read the manifests in deploy/ and need no cluster: they run with -short too.

// operatorRules are the rights the operator's code uses, as "group/resource verb" (group ""
// for core): what the ClusterRole monocle-operator must grant, no more and no less.
var operatorRules = []string{
	"monocle.monocle.change-metrics.io/monocles get", "monocle.monocle.change-metrics.io/monocles list",
	"monocle.monocle.change-metrics.io/monocles watch",
	"monocle.monocle.change-metrics.io/monocles/status update",
	"monocle.monocle.change-metrics.io/monocles/finalizers update",
	"/secrets get", "/secrets list", "/secrets watch", "/secrets create", "/secrets update",
	"/secrets delete", // the Elasticsearch proxy Secret, once the cluster needs it no more
	"/configmaps get", "/configmaps list", "/configmaps watch", "/configmaps create", "/configmaps update",
	"/services get", "/services list", "/services watch", "/services create", "/services update",
	"/persistentvolumeclaims get", "/persistentvolumeclaims list", "/persistentvolumeclaims watch",
	"/persistentvolumeclaims create", "/persistentvolumeclaims update",
	"/events create", "/events patch",
	"apps/deployments get", "apps/deployments list", "apps/deployments watch", "apps/deployments create",
	"apps/deployments update",
	"apps/statefulsets get", "apps/statefulsets list", "apps/statefulsets watch", "apps/statefulsets create",
	"apps/statefulsets update",
	"batch/jobs get", "batch/jobs list", "batch/jobs watch", "batch/jobs create", "batch/jobs delete",
	"policy/poddisruptionbudgets get", "policy/poddisruptionbudgets list", "policy/poddisruptionbudgets watch",
	"policy/poddisruptionbudgets create", "policy/poddisruptionbudgets update", "policy/poddisruptionbudgets delete",
	"storage.k8s.io/storageclasses get",
	"networking.k8s.io/networkpolicies get", "networking.k8s.io/networkpolicies list", "networking.k8s.io/networkpolicies watch",
	"networking.k8s.io/networkpolicies create", "networking.k8s.io/networkpolicies update",
	"networking.k8s.io/ingresses get", "networking.k8s.io/ingresses list", "networking.k8s.io/ingresses watch",
	"networking.k8s.io/ingresses create", "networking.k8s.io/ingresses update", "networking.k8s.io/ingresses delete",
	"gateway.networking.k8s.io/httproutes get", "gateway.networking.k8s.io/httproutes list",
	"gateway.networking.k8s.io/httproutes watch", "gateway.networking.k8s.io/httproutes create",
	"gateway.networking.k8s.io/httproutes update", "gateway.networking.k8s.io/httproutes delete",
	"route.openshift.io/routes get", "route.openshift.io/routes list", "route.openshift.io/routes watch",
	"route.openshift.io/routes create", "route.openshift.io/routes update", "route.openshift.io/routes delete",
	"route.openshift.io/routes/custom-host create",
	"monitoring.coreos.com/podmonitors get", "monitoring.coreos.com/podmonitors list", "monitoring.coreos.com/podmonitors watch",
	"monitoring.coreos.com/podmonitors create", "monitoring.coreos.com/podmonitors update", "monitoring.coreos.com/podmonitors delete",
	"elasticsearch.k8s.elastic.co/elasticsearches get", "elasticsearch.k8s.elastic.co/elasticsearches list",
	"elasticsearch.k8s.elastic.co/elasticsearches watch",
	"gateway.networking.k8s.io/referencegrants get", "gateway.networking.k8s.io/referencegrants list",
	"gateway.networking.k8s.io/referencegrants watch",
}

// manifest is one object of a file in deploy/.
type manifest struct {
	file string
	obj  *unstructured.Unstructured
}

func (m manifest) key() string {
	return m.obj.GetKind() + " " + m.obj.GetNamespace() + "/" + m.obj.GetName()
}

// into converts the object to a typed one.
func (m manifest) into(t *testing.T, out any) {
	t.Helper()
	b, err := m.obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		t.Fatalf("%s in %s: %v", m.key(), m.file, err)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	if env != nil {
		return env.Root
	}
	root, err := localcluster.FindRepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// deployFiles returns the files `kubectl apply -f deploy/` applies, in its order.
func deployFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml", "*.json"} {
		m, err := filepath.Glob(filepath.Join(repoRoot(t), "deploy", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

// decodeAll decodes every YAML document of r (testkit.DecodeManifests).
func decodeAll(t *testing.T, name string, r io.Reader) []manifest {
	t.Helper()
	objs, err := testkit.DecodeManifests(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := make([]manifest, 0, len(objs))
	for _, obj := range objs {
		out = append(out, manifest{file: name, obj: obj})
	}
	return out
}

// deployManifests returns every object in deploy/*.yaml.
func deployManifests(t *testing.T) []manifest {
	t.Helper()
	var out []manifest
	for _, f := range deployFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decodeAll(t, filepath.Base(f), bytes.NewReader(b))...)
	}
	return out
}

func find(t *testing.T, all []manifest, kind, namespace, name string) manifest {
	t.Helper()
	for _, m := range all {
		if m.obj.GetKind() == kind && m.obj.GetNamespace() == namespace && m.obj.GetName() == name {
			return m
		}
	}
	t.Fatalf("no %s %s/%s in deploy/", kind, namespace, name)
	return manifest{}
}

// expandRules flattens rules into "group/resource verb" strings, resource names appended as
// "[name,...]".
func expandRules(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		names := ""
		if len(r.ResourceNames) > 0 {
			names = "[" + strings.Join(r.ResourceNames, ",") + "]"
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+names+" "+v)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestManifestOrderAndNamespace(t *testing.T) {
	all := deployManifests(t)
	var order []string
	for _, m := range all {
		order = append(order, m.obj.GetKind())
	}
	if len(all) < 3 || all[0].obj.GetKind() != "Namespace" || all[1].obj.GetKind() != "CustomResourceDefinition" {
		t.Errorf("deploy/ must apply the Namespace first, then the CRD; it applies %v", order)
	}
	if last := slices.Index(order, "Deployment"); last < slices.Index(order, "ServiceAccount") || last < slices.Index(order, "ClusterRoleBinding") {
		t.Errorf("the Deployment must come after its ServiceAccount and RBAC; order %v", order)
	}
	var ns corev1.Namespace
	find(t, all, "Namespace", "", operatorNamespace).into(t, &ns)
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace %s does not enforce the restricted Pod Security Standard: %v", operatorNamespace, ns.Labels)
	}
	for _, m := range all {
		if ns := m.obj.GetNamespace(); ns != "" && ns != operatorNamespace {
			t.Errorf("%s (%s) is outside the operator's namespace", m.key(), m.file)
		}
	}
}

func TestRBACIsLeastPrivilege(t *testing.T) {
	all := deployManifests(t)
	for _, m := range all {
		var rules []rbacv1.PolicyRule
		switch m.obj.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			m.into(t, &r)
			rules = r.Rules
			if r.AggregationRule != nil {
				t.Errorf("%s aggregates other roles", m.key())
			}
		case "Role":
			var r rbacv1.Role
			m.into(t, &r)
			rules = r.Rules
		default:
			continue
		}
		for _, rule := range expandRules(rules) {
			if strings.Contains(rule, "*") {
				t.Errorf("%s grants a wildcard: %s", m.key(), rule)
			}
			if strings.HasPrefix(rule, "coordination.k8s.io/") && m.key() != "Role "+operatorNamespace+"/monocle-operator-leader-election" {
				t.Errorf("%s grants Lease rights (%s); only the leader election Role in %s may", m.key(), rule, operatorNamespace)
			}
		}
	}

	var operator rbacv1.ClusterRole
	find(t, all, "ClusterRole", "", operatorName).into(t, &operator)
	want := append([]string(nil), operatorRules...)
	sort.Strings(want)
	if extra, missing := diff(expandRules(operator.Rules), want); len(extra)+len(missing) > 0 {
		t.Errorf("ClusterRole %s grants more than the code uses: %v; and less: %v", operatorName, extra, missing)
	}

	var lease rbacv1.Role
	find(t, all, "Role", operatorNamespace, "monocle-operator-leader-election").into(t, &lease)
	wantLease := []string{
		"coordination.k8s.io/leases create",
		"coordination.k8s.io/leases[" + operatorName + "] get",
		"coordination.k8s.io/leases[" + operatorName + "] update",
	}
	if got := expandRules(lease.Rules); !slices.Equal(got, wantLease) {
		t.Errorf("the leader election Role grants %v, want %v", got, wantLease)
	}

	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: operatorName, Namespace: operatorNamespace}
	var crb rbacv1.ClusterRoleBinding
	find(t, all, "ClusterRoleBinding", "", operatorName).into(t, &crb)
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != operatorName || !slices.Equal(crb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("ClusterRoleBinding %s binds %v to %v", operatorName, crb.RoleRef, crb.Subjects)
	}
	var rb rbacv1.RoleBinding
	find(t, all, "RoleBinding", operatorNamespace, "monocle-operator-leader-election").into(t, &rb)
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != "monocle-operator-leader-election" || !slices.Equal(rb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("the leader election RoleBinding binds %v to %v", rb.RoleRef, rb.Subjects)
	}
	find(t, all, "ServiceAccount", operatorNamespace, operatorName)
}

func TestUserRolesAggregate(t *testing.T) {
	all := deployManifests(t)
	for name, c := range map[string]struct {
		label string
		verbs []string
	}{
		"monocle-view": {"rbac.authorization.k8s.io/aggregate-to-view", []string{"get", "list", "watch"}},
		"monocle-edit": {"rbac.authorization.k8s.io/aggregate-to-edit", []string{"create", "update", "patch", "delete", "deletecollection"}},
	} {
		var role rbacv1.ClusterRole
		find(t, all, "ClusterRole", "", name).into(t, &role)
		if role.Labels[c.label] != "true" {
			t.Errorf("ClusterRole %s lacks the label %s=true", name, c.label)
		}
		for _, rule := range expandRules(role.Rules) {
			resource, verb, _ := strings.Cut(rule, " ")
			if !slices.Contains(c.verbs, verb) {
				t.Errorf("ClusterRole %s grants %s", name, rule)
			}
			if !strings.HasPrefix(resource, "monocle.monocle.change-metrics.io/monocles") {
				t.Errorf("ClusterRole %s grants rights beyond Monocles: %s", name, rule)
			}
			if resource != "monocle.monocle.change-metrics.io/monocles" && verb != "get" && verb != "list" && verb != "watch" {
				t.Errorf("ClusterRole %s lets users write %s", name, resource)
			}
		}
	}
}

func TestOperatorDeployment(t *testing.T) {
	var d appsv1.Deployment
	find(t, deployManifests(t), "Deployment", operatorNamespace, operatorName).into(t, &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != operatorName {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the pod security context does not require non-root and RuntimeDefault seccomp: %+v", psc)
	}
	if len(pod.Containers) != 1 || pod.Containers[0].Name != "operator" {
		t.Fatalf("want one container named operator, have %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !strings.HasPrefix(c.Image, "quay.io/change-metrics/monocle-operator:") {
		t.Errorf("image %q", c.Image)
	}
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the container security context is not locked down: %+v", sc)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s, limit %s", r, req.String(), lim.String())
		}
	}

	port := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--http-address="); ok {
			_, port, _ = strings.Cut(v, ":")
		}
	}
	if port == "" {
		t.Fatalf("the args do not set --http-address=<host>:<port>: %v", c.Args)
	}
	named := map[string]string{}
	for _, p := range c.Ports {
		named[p.Name] = fmt.Sprint(p.ContainerPort)
	}
	for probe, path := range map[string]string{"liveness": "/healthz", "readiness": "/readyz"} {
		p := c.LivenessProbe
		if probe == "readiness" {
			p = c.ReadinessProbe
		}
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", probe)
			continue
		}
		got := p.HTTPGet.Port.String()
		if n, ok := named[got]; ok {
			got = n
		}
		if p.HTTPGet.Path != path || got != port {
			t.Errorf("%s probe GETs %s on port %s, want %s on %s (--http-address)", probe, p.HTTPGet.Path, got, path, port)
		}
	}
	podNamespace := false
	for _, e := range c.Env {
		if e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			podNamespace = true
		}
	}
	if !podNamespace {
		t.Error("POD_NAMESPACE does not come from the downward API (metadata.namespace)")
	}
}

// makefileVersionPattern finds the release in the Makefile's `VERSION ?= <release>` line.
var makefileVersionPattern = regexp.MustCompile(`(?m)^VERSION[ \t]*\?=[ \t]*(\S+)[ \t]*$`)

// imageRefs returns, as "path: reference", every image v names: the value of each "image"
// key (containers, init containers, a Monocle's spec.image and its overrides), and of each
// kustomize images entry its newName:newTag.
func imageRefs(path string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "image" {
				out = append(out, path+"."+k+": "+s)
				continue
			}
			if list, ok := e.([]any); ok && k == "images" {
				for i, entry := range list {
					m, _ := entry.(map[string]any)
					name, _ := m["newName"].(string)
					if name == "" {
						name, _ = m["name"].(string)
					}
					ref := name
					if tag, _ := m["newTag"].(string); tag != "" {
						ref += ":" + tag
					}
					if digest, _ := m["digest"].(string); digest != "" {
						ref += "@" + digest
					}
					out = append(out, fmt.Sprintf("%s.images[%d]: %s", path, i, ref))
				}
				continue
			}
			out = append(out, imageRefs(path+"."+k, e)...)
		}
	case []any:
		for i, e := range v {
			out = append(out, imageRefs(fmt.Sprintf("%s[%d]", path, i), e)...)
		}
	}
	return out
}

// TestImagesPinned fails when a file under deploy/ (samples and the namespaced component
// included) names an image by :latest or with neither tag nor digest, and when the operator
// image's tag is not the Makefile's VERSION: deploy/ installs the release it belongs to.
func TestImagesPinned(t *testing.T) {
	root := repoRoot(t)
	var refs []string
	err := filepath.WalkDir(filepath.Join(root, "deploy"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// The Helm chart's templates are YAML only once rendered, and its files/ are
			// fragments of them; the chart's own test checks the image they render.
			if d.Name() == "templates" || d.Name() == "files" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range decodeAll(t, rel, bytes.NewReader(b)) {
			refs = append(refs, imageRefs(filepath.ToSlash(rel)+" "+m.key(), m.obj.Object)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("no image found in deploy/")
	}
	for _, r := range refs {
		_, ref, _ := strings.Cut(r, ": ")
		if _, tag, digest := resources.SplitImage(ref); tag == "latest" || (tag == "" && digest == "") {
			t.Errorf("%s: pin a release tag or a digest, not :latest or no tag", r)
		}
	}

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := makefileVersionPattern.FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile has no `VERSION ?= <release>` line")
	}
	version := string(m[1])
	var d appsv1.Deployment
	find(t, deployManifests(t), "Deployment", operatorNamespace, operatorName).into(t, &d)
	for _, c := range d.Spec.Template.Spec.Containers {
		repository, tag, _ := resources.SplitImage(c.Image)
		if repository == "quay.io/change-metrics/monocle-operator" && tag != version {
			t.Errorf("the operator image is %s; the Makefile's VERSION is %s: use %s:%s", c.Image, version, repository, version)
		}
	}
}

// diff returns what got has beyond want, and what it lacks.
func diff(got, want []string) (extra, missing []string) {
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	return extra, missing
}

// kustomization is the part of a kustomization.yaml the tests read.
type kustomization struct {
	Resources []string `json:"resources"`
}

func TestRootKustomizationListsDeploy(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range deployFiles(t) {
		rel, _ := filepath.Rel(root, f)
		want = append(want, filepath.ToSlash(rel))
	}
	got := append([]string(nil), k.Resources...)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml lists %v; deploy/ holds %v", got, want)
	}

	built := kustomize(t, root)
	keys := func(ms []manifest) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.key())
		}
		sort.Strings(out)
		return out
	}
	if got, want := keys(built), keys(deployManifests(t)); !slices.Equal(got, want) {
		t.Errorf("kubectl kustomize . builds\n%s\nkubectl apply -f deploy/ applies\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNamespacedComponent(t *testing.T) {
	all := kustomize(t, namespacedOverlay(t))
	var rb rbacv1.RoleBinding
	for _, m := range all {
		switch m.key() {
		case "ClusterRoleBinding /" + operatorName:
			t.Errorf("the namespaced install keeps the cluster-wide ClusterRoleBinding")
		case "RoleBinding " + namespacedWatch + "/" + operatorName:
			m.into(t, &rb)
		case "Deployment " + operatorNamespace + "/" + operatorName:
			var d appsv1.Deployment
			m.into(t, &d)
			if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--namespaces="+namespacedWatch) {
				t.Errorf("the namespaced Deployment's args lack --namespaces=%s: %v", namespacedWatch, args)
			}
		}
		if m.obj.GetKind() == "ClusterRoleBinding" && m.obj.GetName() != "monocle-operator-storageclasses" {
			t.Errorf("the namespaced install has %s", m.key())
		}
	}
	if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != operatorName {
		t.Errorf("RoleBinding %s/%s refers to %+v, want ClusterRole %s", namespacedWatch, operatorName, rb.RoleRef, operatorName)
	}
}

// namespacedWatch is the namespace deploy/namespaced watches.
const namespacedWatch = "monocle"

// namespacedOverlay writes a kustomization outside the repository that applies
// deploy/namespaced to the root kustomization, as docs/installation.md tells users to (overlayWith).
func namespacedOverlay(t *testing.T) string { return overlayWith(t, "deploy/namespaced") }

// overlayWith writes a kustomization outside the repository (kustomize refuses a base that
// contains its overlay) that applies the component in the repository's folder component to
// the root kustomization, and returns its directory.
func overlayWith(t *testing.T, component string) string {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	rel = filepath.ToSlash(rel)
	k := fmt.Sprintf("resources:\n- %s\ncomponents:\n- %s/%s\n", rel, rel, component)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kustomize runs `kubectl kustomize dir` and decodes its output.
func kustomize(t *testing.T, dir string) []manifest {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command("kubectl", "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	return decodeAll(t, "kustomize "+dir, &out)
}
