package testkit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fixtureUIDs are the UIDs the fixture was captured with (the Monocle's, the objects', the
// Job's in its labels and selector, the PVC's in its volume name), none of which may reach
// the objects created from it.
var fixtureUIDs = []string{"0c28742a", "fe9854de", "64bc055c", "7e9cd346", "d8bd8754", "9c9c6814",
	"109c64eb", "063926b6", "76c5e442", "7b70111a"}

func earlierFixture(t *testing.T) string {
	t.Helper()
	path, err := EarlierFixturePath()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

func nestedString(t *testing.T, u *unstructured.Unstructured, path ...string) string {
	t.Helper()
	s, _, err := unstructured.NestedString(u.Object, path...)
	if err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return s
}

func TestEarlierObjects(t *testing.T) {
	monocle, others, err := EarlierObjects(earlierFixture(t), "ns1", "mona")
	if err != nil {
		t.Fatal(err)
	}
	if monocle.GetName() != "mona" || monocle.GetNamespace() != "ns1" || monocle.GetAnnotations()[pausedAnnotation] != "true" {
		t.Errorf("Monocle %s/%s with annotations %v, want ns1/mona, paused", monocle.GetNamespace(), monocle.GetName(), monocle.GetAnnotations())
	}
	if got := nestedString(t, monocle, "spec", "image"); got != "quay.io/change-metrics/monocle:1.9.0" {
		t.Errorf("spec.image = %q", got)
	}

	var kinds []string
	for _, u := range others {
		kinds = append(kinds, u.GetKind()+"/"+u.GetName())
	}
	want := "PersistentVolumeClaim/mona-elastic-data-volume-mona-elastic-0 Secret/mona-api ConfigMap/mona-api " +
		"Service/mona-api Service/mona-elastic StatefulSet/mona-elastic Deployment/mona-api Deployment/mona-crawler Job/update-idents-job"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("objects in creation order:\n%s\nwant:\n%s", got, want)
	}

	SetOwnerUID(others, "new-uid")
	for _, u := range append(others, monocle) {
		js, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		// The last-applied annotations hold a creationTimestamp of their own.
		bare := u.DeepCopy()
		unstructured.RemoveNestedField(bare.Object, "metadata", "annotations")
		bareJS, err := json.Marshal(bare.Object)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{`"status"`, `"resourceVersion"`, `"creationTimestamp"`, `"generation"`, `"managedFields"`} {
			if strings.Contains(string(bareJS), bad) {
				t.Errorf("%s %s still holds %s: %s", u.GetKind(), u.GetName(), bad, bareJS)
			}
		}
		for _, bad := range append([]string{"monocle-sample", "legacy", `"uid"`}, fixtureUIDs...) {
			if bad == `"uid"` && u.GetKind() != "Monocle" {
				// Owner references carry a uid; only the rewritten one.
				if strings.Count(string(js), `"uid"`) != len(u.GetOwnerReferences()) {
					t.Errorf("%s %s keeps a uid: %s", u.GetKind(), u.GetName(), js)
				}
				continue
			}
			if strings.Contains(string(js), bad) {
				t.Errorf("%s %s still holds %s: %s", u.GetKind(), u.GetName(), bad, js)
			}
		}
		if u.GetNamespace() != "ns1" {
			t.Errorf("%s %s in namespace %q", u.GetKind(), u.GetName(), u.GetNamespace())
		}
		if u.GetKind() == "PersistentVolumeClaim" {
			if len(u.GetOwnerReferences()) != 0 {
				t.Errorf("the PVC got an owner: %v", u.GetOwnerReferences())
			}
			continue
		}
		if u.GetKind() == "Monocle" {
			continue
		}
		refs := u.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Name != "mona" || refs[0].UID != "new-uid" || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%s %s owner references: %+v", u.GetKind(), u.GetName(), refs)
		}
	}

	api := find(t, others, "Deployment", "mona-api")
	containers, _, _ := unstructured.NestedSlice(api.Object, "spec", "template", "spec", "containers")
	if js, _ := json.Marshal(containers); !strings.Contains(string(js), `"value":"http://mona-elastic:9200"`) ||
		!strings.Contains(string(js), `"secretRef":{"name":"mona-api"}`) || !strings.Contains(string(js), `"name":"mona-api-cm-volume"`) {
		t.Errorf("API containers not renamed: %s", js)
	}
	if sel, _, _ := unstructured.NestedStringMap(api.Object, "spec", "selector", "matchLabels"); sel["app"] != "monocle" || sel["tier"] != "api" {
		t.Errorf("API selector = %v, want the earlier operator's app=monocle,tier=api", sel)
	}
	sts := find(t, others, "StatefulSet", "mona-elastic")
	templates, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
	if len(templates) != 1 {
		t.Fatalf("volumeClaimTemplates = %v", templates)
	}
	if name, _, _ := unstructured.NestedString(templates[0].(map[string]any), "metadata", "name"); name != "mona-elastic-data-volume" {
		t.Errorf("volumeClaimTemplate %q", name)
	}
	for _, svc := range []string{"mona-api", "mona-elastic"} {
		s := find(t, others, "Service", svc)
		if ip := nestedString(t, s, "spec", "clusterIP"); ip != "" {
			t.Errorf("Service %s keeps clusterIP %s", svc, ip)
		}
		if _, found, _ := unstructured.NestedSlice(s.Object, "spec", "clusterIPs"); found {
			t.Errorf("Service %s keeps clusterIPs", svc)
		}
	}
	pvc := find(t, others, "PersistentVolumeClaim", "mona-elastic-data-volume-mona-elastic-0")
	if v := nestedString(t, pvc, "spec", "volumeName"); v != "" {
		t.Errorf("PVC keeps volumeName %s", v)
	}
	for k := range pvc.GetAnnotations() {
		if strings.HasPrefix(k, "pv.kubernetes.io/") {
			t.Errorf("PVC keeps annotation %s", k)
		}
	}
	if got := nestedString(t, pvc, "spec", "storageClassName"); got != "kwok-volume" {
		t.Errorf("PVC storageClassName = %q", got)
	}
	job := find(t, others, "Job", "update-idents-job")
	if _, found, _ := unstructured.NestedMap(job.Object, "spec", "selector"); found {
		t.Error("the Job keeps its selector")
	}
	if len(job.GetLabels()) != 0 {
		t.Errorf("the Job keeps labels %v", job.GetLabels())
	}
	if _, found, _ := unstructured.NestedMap(job.Object, "spec", "template", "metadata", "labels"); found {
		t.Error("the Job's pod template keeps its labels")
	}
	if last := monocle.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; !strings.Contains(last, `"name":"mona","namespace":"ns1"`) {
		t.Errorf("last-applied-configuration not rewritten: %s", last)
	}
}

func TestEarlierObjectsErrors(t *testing.T) {
	if _, _, err := EarlierObjects(filepath.Join(t.TempDir(), "missing.yaml"), "ns", "m"); err == nil {
		t.Error("a missing fixture gave no error")
	}
	noMonocle := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(noMonocle, []byte("# comment\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: monocle-sample-api\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := EarlierObjects(noMonocle, "ns", "m"); err == nil || !strings.Contains(err.Error(), "no Monocle") {
		t.Errorf("a fixture without a Monocle: %v", err)
	}
}

// earlierKubectl puts on $PATH a kubectl that appends its arguments to calls.log, saves its
// standard input of call N in stdin-N, prints "monocle-uid" for a create with a jsonpath
// output and "uid-of-<object>" for a get with one.
func earlierKubectl(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	script := `#!/bin/sh
n=$(cat "` + dir + `/calls.log" 2>/dev/null | wc -l | tr -d ' ')
echo "$*" >> "` + dir + `/calls.log"
cat > "` + dir + `/stdin-$n"
case "$*" in
create*jsonpath*) echo monocle-uid ;;
get*jsonpath*) echo "uid-of-$4" ;;
get*job/*) if [ -n "$FAKE_JOB_EXISTS" ]; then echo "job.batch/$4"; fi ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func TestCreateEarlierOperatorMonocle(t *testing.T) {
	dir := earlierKubectl(t)
	k := Kubectl{Kubeconfig: "/tmp/test.kubeconfig"}
	ctx := context.Background()
	e, err := CreateEarlierOperatorMonocle(ctx, k, earlierFixture(t), "ns1", "mona")
	if err != nil {
		t.Fatal(err)
	}
	calls, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := `create -n ns1 -f - -o jsonpath={.metadata.uid}
get -n ns1 job/update-idents-job --ignore-not-found -o name
create -n ns1 -f -
get -n ns1 persistentvolumeclaim/mona-elastic-data-volume-mona-elastic-0 -o jsonpath={.metadata.uid}
get -n ns1 statefulset/mona-elastic -o jsonpath={.metadata.uid}
`
	if string(calls) != want {
		t.Errorf("kubectl calls:\n%s\nwant:\n%s", calls, want)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "stdin-0"))
	if !strings.Contains(string(first), "kind: Monocle") || !strings.Contains(string(first), pausedAnnotation+`: "true"`) || strings.Contains(string(first), "---") {
		t.Errorf("the first create is not the paused Monocle alone:\n%s", first)
	}
	second, _ := os.ReadFile(filepath.Join(dir, "stdin-2"))
	if n := strings.Count(string(second), "uid: monocle-uid"); n != 8 {
		t.Errorf("%d owner references carry the new Monocle's UID, want 8:\n%s", n, second)
	}
	if n := strings.Count(string(second), "---\n"); n != 9 {
		t.Errorf("the second create holds %d objects, want 9", n)
	}

	if e.UID != "monocle-uid" || e.PVCUID != "uid-of-persistentvolumeclaim/mona-elastic-data-volume-mona-elastic-0" ||
		e.StatefulSetUID != "uid-of-statefulset/mona-elastic" || e.Namespace != "ns1" || e.Name != "mona" {
		t.Errorf("EarlierMonocle = %+v", e)
	}
	if string(e.SecretData["GITHUB_TOKEN"]) != "ghp_example" || len(e.SecretData["CRAWLERS_API_KEY"]) != 24 {
		t.Errorf("SecretData = %q", e.SecretData)
	}
	if !strings.Contains(e.Config, "- name: openstack") {
		t.Errorf("Config = %q", e.Config)
	}
	if len(e.Objects) != 9 {
		t.Errorf("%d Objects, want 9", len(e.Objects))
	}

	if err := UnpauseMonocle(ctx, k, "ns1", "mona"); err != nil {
		t.Fatal(err)
	}
	calls, _ = os.ReadFile(filepath.Join(dir, "calls.log"))
	if !strings.HasSuffix(string(calls), "annotate -n ns1 monocle/mona "+pausedAnnotation+"-\n") {
		t.Errorf("UnpauseMonocle ran:\n%s", calls)
	}
}

func TestCreateEarlierOperatorMonocleSecondInNamespace(t *testing.T) {
	dir := earlierKubectl(t)
	t.Setenv("FAKE_JOB_EXISTS", "1")
	e, err := CreateEarlierOperatorMonocle(context.Background(), Kubectl{}, earlierFixture(t), "ns1", "monb")
	if err != nil {
		t.Fatal(err)
	}
	created, _ := os.ReadFile(filepath.Join(dir, "stdin-2"))
	if strings.Contains(string(created), "kind: Job") || len(e.Objects) != 8 {
		t.Errorf("with update-idents-job taken, %d objects were created, want 8 and no Job:\n%s", len(e.Objects), created)
	}
}
