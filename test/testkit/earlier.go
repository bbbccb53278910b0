package testkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-operator/test/localcluster"
)

// EarlierFixture is the path, relative to the repository root, of what the earlier operator
// (change-metrics/monocle-operator v0.0.2) leaves in a namespace for its sample Monocle
// "monocle-sample": the Monocle, its StatefulSet, Deployments, Services, Secret, ConfigMap,
// the Elasticsearch PVC and a completed update-idents Job, as read back from a real run.
const EarlierFixture = "test/testdata/earlier-operator-v0.0.2/objects.yaml"

// earlierName and earlierNamespace are the Monocle name and namespace the fixture was
// captured with.
const (
	earlierName      = "monocle-sample"
	earlierNamespace = "legacy"
)

// pausedAnnotation is the Monocle annotation that makes our operator leave a Monocle alone
// (v1alpha1.PausedAnnotation; spelled out so testkit depends on no operator package).
const pausedAnnotation = "monocle.change-metrics.io/paused"

// EarlierFixturePath returns the absolute path of EarlierFixture in the repository that
// holds the current directory (found with localcluster.FindRepoRoot).
func EarlierFixturePath() (string, error) {
	root, err := localcluster.FindRepoRoot("")
	if err != nil {
		return "", err
	}
	return filepath.Join(root, EarlierFixture), nil
}

// EarlierMonocle is an earlier-operator Monocle that CreateEarlierOperatorMonocle made, with
// what a test compares after our operator took it over.
type EarlierMonocle struct {
	Namespace, Name string
	// UID is the Monocle's UID, which every created object's owner reference carries.
	UID string
	// PVCName is the Elasticsearch claim, <name>-elastic-data-volume-<name>-elastic-0, and
	// PVCUID its UID.
	PVCName, PVCUID string
	// StatefulSetName is <name>-elastic and StatefulSetUID its UID.
	StatefulSetName, StatefulSetUID string
	// SecretData is the data of Secret <name>-api as created (CRAWLERS_API_KEY and the
	// user's GITHUB_TOKEN), decoded.
	SecretData map[string][]byte
	// Config is config.yaml of ConfigMap <name>-api as created (the user's edit).
	Config string
	// Objects are the objects created after the Monocle, in creation order, as sent; the
	// Job update-idents-job is among them unless the namespace already had one.
	Objects []*unstructured.Unstructured
}

// EarlierObjects reads the multi-document YAML file fixture (EarlierFixture's format) and
// returns its Monocle and the other objects, ready to be created in namespace under the
// Monocle name name: every "monocle-sample" in a string value (names, label values, env
// values, owner reference names, volume names, the last-applied annotation) becomes name;
// metadata.namespace is namespace; what the API server generates is removed (uid,
// resourceVersion, creationTimestamp, generation, managedFields, status, a Service's
// clusterIP and clusterIPs, a PVC's volumeName and pv.kubernetes.io/* annotations, a Job's
// selector and controller-uid/job-name labels). The Monocle gets the paused annotation set
// to "true". The others are ordered for creation: the PVC before the StatefulSet (which
// would otherwise create the claim itself), the Secret and ConfigMap before the workloads.
// Their owner references still carry the fixture's UID: see SetOwnerUID.
func EarlierObjects(fixture, namespace, name string) (monocle *unstructured.Unstructured, others []*unstructured.Unstructured, err error) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		return nil, nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", fixture, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", fixture, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue // a comment-only document
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", fixture, err)
		}
		u.Object = renameValues(u.Object, name, namespace).(map[string]any)
		prepareEarlierObject(u, namespace)
		if u.GetKind() == "Monocle" {
			if monocle != nil {
				return nil, nil, fmt.Errorf("%s holds more than one Monocle", fixture)
			}
			monocle = u
			continue
		}
		others = append(others, u)
	}
	if monocle == nil {
		return nil, nil, fmt.Errorf("%s holds no Monocle", fixture)
	}
	annotations := monocle.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[pausedAnnotation] = "true"
	monocle.SetAnnotations(annotations)
	sort.SliceStable(others, func(i, j int) bool { return creationRank(others[i]) < creationRank(others[j]) })
	return monocle, others, nil
}

// creationRank orders kinds for creation; unknown kinds go last.
func creationRank(u *unstructured.Unstructured) int {
	for i, kind := range []string{"PersistentVolumeClaim", "Secret", "ConfigMap", "Service", "StatefulSet", "Deployment", "Job"} {
		if u.GetKind() == kind {
			return i
		}
	}
	return 100
}

// renameValues returns v with earlierName replaced by name in every string, and the
// fixture's namespace by namespace in the JSON of last-applied annotations.
func renameValues(v any, name, namespace string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = renameValues(e, name, namespace)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = renameValues(e, name, namespace)
		}
		return v
	case string:
		v = strings.ReplaceAll(v, earlierName, name)
		return strings.ReplaceAll(v, `"namespace":"`+earlierNamespace+`"`, `"namespace":"`+namespace+`"`)
	default:
		return v
	}
}

// prepareEarlierObject sets u's namespace and removes what the API server generates.
func prepareEarlierObject(u *unstructured.Unstructured, namespace string) {
	u.SetNamespace(namespace)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	switch u.GetKind() {
	case "Service":
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	case "PersistentVolumeClaim":
		unstructured.RemoveNestedField(u.Object, "spec", "volumeName")
		annotations := u.GetAnnotations()
		for k := range annotations {
			if strings.HasPrefix(k, "pv.kubernetes.io/") {
				delete(annotations, k)
			}
		}
		u.SetAnnotations(annotations)
	case "StatefulSet":
		templates, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumeClaimTemplates")
		for _, t := range templates {
			if t, ok := t.(map[string]any); ok {
				unstructured.RemoveNestedField(t, "metadata", "namespace")
				unstructured.RemoveNestedField(t, "status")
			}
		}
		if templates != nil {
			_ = unstructured.SetNestedSlice(u.Object, templates, "spec", "volumeClaimTemplates")
		}
	case "Job":
		unstructured.RemoveNestedField(u.Object, "spec", "selector")
		if labels := withoutJobLabels(u.GetLabels()); len(labels) > 0 {
			u.SetLabels(labels)
		} else {
			unstructured.RemoveNestedField(u.Object, "metadata", "labels")
		}
		podLabels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
		if podLabels = withoutJobLabels(podLabels); len(podLabels) > 0 {
			_ = unstructured.SetNestedStringMap(u.Object, podLabels, "spec", "template", "metadata", "labels")
		} else {
			unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "labels")
		}
	}
}

// withoutJobLabels returns labels without those the Job controller sets from the Job's UID
// and name.
func withoutJobLabels(labels map[string]string) map[string]string {
	for _, k := range []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"} {
		delete(labels, k)
	}
	return labels
}

// SetOwnerUID sets the uid of every owner reference of objs to uid.
func SetOwnerUID(objs []*unstructured.Unstructured, uid string) {
	for _, u := range objs {
		refs := u.GetOwnerReferences()
		for i := range refs {
			refs[i].UID = types.UID(uid)
		}
		if refs != nil {
			u.SetOwnerReferences(refs)
		}
	}
}

// CreateEarlierOperatorMonocle creates in namespace (which must exist) what the earlier
// operator leaves for a Monocle called name, from the fixture file (EarlierFixturePath):
// first the Monocle, paused (so that our operator, if it runs, leaves it alone until
// UnpauseMonocle), then, owned by it through the fixture's controller owner references, the
// PVC, Secret, ConfigMap, Services, StatefulSet, Deployments and Job (see EarlierObjects).
// It returns as soon as the objects exist; WaitEarlierRolledOut waits for their pods. Its
// errors say which step failed and include kubectl's output. The Job's pod is refused in a
// namespace enforcing the restricted Pod Security Standard (its pod has no security
// context); the Job object exists anyway. The Job's name, update-idents-job, is the same
// for every Monocle, as the earlier operator made it: when the namespace already has one
// (another earlier Monocle's), none is created, as with the earlier operator.
func CreateEarlierOperatorMonocle(ctx context.Context, k Kubectl, fixture, namespace, name string) (*EarlierMonocle, error) {
	monocle, others, err := EarlierObjects(fixture, namespace, name)
	if err != nil {
		return nil, err
	}
	doc, err := yaml.Marshal(monocle.Object)
	if err != nil {
		return nil, err
	}
	out, err := k.RunStdin(ctx, string(doc), "create", "-n", namespace, "-f", "-", "-o", "jsonpath={.metadata.uid}")
	if err != nil {
		return nil, fmt.Errorf("creating Monocle %s/%s: %v: %s", namespace, name, err, out)
	}
	e := &EarlierMonocle{Namespace: namespace, Name: name, UID: strings.TrimSpace(out),
		PVCName: name + "-elastic-data-volume-" + name + "-elastic-0", StatefulSetName: name + "-elastic"}
	if e.UID == "" {
		return nil, fmt.Errorf("creating Monocle %s/%s: kubectl printed no UID", namespace, name)
	}
	// The earlier operator names its Job update-idents-job whatever the Monocle: the second
	// Monocle of a namespace never got one.
	kept := others[:0]
	for _, u := range others {
		if u.GetKind() == "Job" {
			out, err := k.Run(ctx, "get", "-n", namespace, "job/"+u.GetName(), "--ignore-not-found", "-o", "name")
			if err != nil {
				return nil, fmt.Errorf("looking for Job %s/%s: %v: %s", namespace, u.GetName(), err, out)
			}
			if strings.TrimSpace(out) != "" {
				continue
			}
		}
		kept = append(kept, u)
	}
	others = kept
	e.Objects = others
	SetOwnerUID(others, e.UID)
	var stream strings.Builder
	for _, u := range others {
		doc, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		stream.WriteString("---\n")
		stream.Write(doc)
		switch {
		case u.GetKind() == "Secret" && u.GetName() == name+"-api":
			if e.SecretData, err = secretData(u); err != nil {
				return nil, err
			}
		case u.GetKind() == "ConfigMap" && u.GetName() == name+"-api":
			e.Config, _, _ = unstructured.NestedString(u.Object, "data", "config.yaml")
		}
	}
	if out, err := k.RunStdin(ctx, stream.String(), "create", "-n", namespace, "-f", "-"); err != nil {
		return nil, fmt.Errorf("creating the objects of Monocle %s/%s: %v: %s", namespace, name, err, out)
	}
	if e.PVCUID, err = getUID(ctx, k, namespace, "persistentvolumeclaim/"+e.PVCName); err != nil {
		return nil, err
	}
	if e.StatefulSetUID, err = getUID(ctx, k, namespace, "statefulset/"+e.StatefulSetName); err != nil {
		return nil, err
	}
	return e, nil
}

// WaitEarlierRolledOut waits up to timeout for the earlier operator's workloads of e (the
// StatefulSet <name>-elastic, the Deployments <name>-api and <name>-crawler) to have their
// pods ready, with kubectl rollout status.
func WaitEarlierRolledOut(ctx context.Context, k Kubectl, e *EarlierMonocle, timeout time.Duration) error {
	for _, w := range []string{"statefulset/" + e.Name + "-elastic", "deployment/" + e.Name + "-api", "deployment/" + e.Name + "-crawler"} {
		if out, err := k.Run(ctx, "rollout", "status", "-n", e.Namespace, w, "--timeout="+timeout.String()); err != nil {
			return fmt.Errorf("waiting for %s/%s: %v: %s", e.Namespace, w, err, out)
		}
	}
	return nil
}

// UnpauseMonocle removes the paused annotation from Monocle namespace/name: for a Monocle
// that CreateEarlierOperatorMonocle made, this is our operator starting on it.
func UnpauseMonocle(ctx context.Context, k Kubectl, namespace, name string) error {
	if out, err := k.Run(ctx, "annotate", "-n", namespace, "monocle/"+name, pausedAnnotation+"-"); err != nil {
		return fmt.Errorf("unpausing Monocle %s/%s: %v: %s", namespace, name, err, out)
	}
	return nil
}

func getUID(ctx context.Context, k Kubectl, namespace, object string) (string, error) {
	out, err := k.Run(ctx, "get", "-n", namespace, object, "-o", "jsonpath={.metadata.uid}")
	if err != nil {
		return "", fmt.Errorf("reading the UID of %s/%s: %v: %s", namespace, object, err, out)
	}
	if uid := strings.TrimSpace(out); uid != "" {
		return uid, nil
	}
	return "", fmt.Errorf("reading the UID of %s/%s: kubectl printed none", namespace, object)
}

func secretData(u *unstructured.Unstructured) (map[string][]byte, error) {
	encoded, _, err := unstructured.NestedStringMap(u.Object, "data")
	if err != nil {
		return nil, fmt.Errorf("Secret %s: %w", u.GetName(), err)
	}
	data := make(map[string][]byte, len(encoded))
	for k, v := range encoded {
		if data[k], err = base64.StdEncoding.DecodeString(v); err != nil {
			return nil, fmt.Errorf("Secret %s key %s: %w", u.GetName(), k, err)
		}
	}
	return data, nil
}
