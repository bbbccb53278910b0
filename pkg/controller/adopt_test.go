package controller

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	core "k8s.io/client-go/testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// earlierFixture is what the earlier operator (v0.0.2) leaves in a namespace, captured from a
// real run: test/testdata/earlier-operator-v0.0.2/objects.yaml.
var earlierFixture = filepath.Join("..", "..", "test", "testdata", "earlier-operator-v0.0.2", "objects.yaml")

// loadEarlierFixture decodes the fixture: the Monocle (its status, the earlier operator's,
// dropped) and the objects it owns, all as the API server holds them.
func loadEarlierFixture(t *testing.T) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	raw, err := os.ReadFile(earlierFixture)
	if err != nil {
		t.Fatal(err)
	}
	decode := serializer.NewCodecFactory(testScheme).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var m *monoclev1alpha1.Monocle
	var objects []runtime.Object
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decode.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding the fixture: %v", err)
		}
		if mon, ok := obj.(*monoclev1alpha1.Monocle); ok {
			mon.Status = monoclev1alpha1.MonocleStatus{}
			m = mon
			continue
		}
		objects = append(objects, obj)
	}
	if m == nil || len(objects) != 9 {
		t.Fatalf("the fixture holds Monocle %v and %d objects, want one and 9", m, len(objects))
	}
	return m, objects
}

// earlierFixtureController seeds a fixture as the operator meets it when it starts: the
// earlier objects lack the operator's label, so only the API server has them, and the
// metadata cache of every Secret sees the earlier Secret.
func earlierFixtureController(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object) *fixture {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	for _, obj := range objects {
		if s, ok := obj.(*corev1.Secret); ok {
			f.userSecrets = append(f.userSecrets, s)
			continue
		}
		f.uncached = append(f.uncached, obj)
	}
	return f
}

// TestAdoptEarlierOperatorObjects: the first sync over the earlier operator's objects keeps the
// data (PVC, keys, the user's token and config), updates every object in place, deletes the
// earlier Job and reports the adoption; no immutable field is touched and nothing is
// recreated.
func TestAdoptEarlierOperatorObjects(t *testing.T) {
	m, objects := loadEarlierFixture(t)
	// As after the operator reported on it while it was paused for the hand-over.
	m.Status.ObservedGeneration = m.Generation
	fixtureSecret := find[*corev1.Secret](objects, "monocle-sample-api")
	fixtureConfig := find[*corev1.ConfigMap](objects, "monocle-sample-api").Data["config.yaml"]
	f := earlierFixtureController(t, m, objects)
	kubeWrites, monocleWrites := f.run()

	// Each earlier object the label-filtered cache cannot see costs one create refused with
	// AlreadyExists, then a read and an update in place, which carries the builder's object
	// merged into the earlier one; only the copy of the keys is new. MONOCLE_JWK_GEN_KEY is
	// generated, so it is taken from what was written.
	c := f.controller
	keys := map[string][]byte{resources.CrawlersAPIKeyKey: fixtureSecret.Data[resources.CrawlersAPIKeyKey]}
	if backup := written[*corev1.Secret](kubeWrites, resources.KeysBackupName(m)); backup != nil {
		keys[resources.JWKGenKeyKey] = backup.Data[resources.JWKGenKeyKey]
	}
	secret := merged(c.secrets, resources.NewAPISecret(m, keys), fixtureSecret)
	in := resources.Inputs{ConfigHash: resources.ConfigHash(fixtureConfig), SecretHash: resources.SecretHash(secret.Data, ""),
		Elastic: bundledAccess(m, lastWritten(kubeWrites))}
	earlierPVC := find[*corev1.PersistentVolumeClaim](objects, "monocle-sample-elastic-data-volume-monocle-sample-elastic-0")
	pvc := earlierPVC.DeepCopy()
	pvc.Labels = owned.Union(earlierPVC.Labels, resources.Labels(m, resources.ComponentElastic))
	// The workloads have not rolled out, so the Services keep the earlier selector.
	held := c.serviceClient(false)
	desiredConfig := resources.NewConfigMap(m, resources.DefaultConfig)
	desiredElasticSvc, desiredAPISvc := resources.NewElasticService(m), resources.NewAPIService(m)
	// The node gets its users (TestElasticUsers checks their Secret) and the pods the proxy.
	users := written[*corev1.Secret](kubeWrites, resources.ElasticUsersSecretName(m))
	if users == nil {
		t.Fatal("no Secret of the node's users")
	}
	proxy, err := resources.NewProxySecret(m, in.Elastic.Target)
	if err != nil {
		t.Fatal(err)
	}
	desiredElastic := resources.NewElasticStatefulSet(m, resources.EarlierElasticDataVolume(m), false, resources.ElasticUsersHash(users.Data))
	desiredAPI, desiredCrawler := resources.NewAPIDeployment(m, in), resources.NewCrawlerDeployment(m, in)
	checkActions(t, kubeWrites,
		expectCreate(users),
		expectCreate(proxy),
		expectDelete("jobs", m.Namespace, EarlierUpdateIdentsJob),
		expectUpdate(pvc),
		expectCreate(resources.NewKeysBackupSecret(m, keys)),
		expectCreate(resources.NewAPISecret(m, keys)),
		expectUpdate(secret),
		expectCreate(desiredConfig),
		expectUpdate(merged(c.userConfigMaps, desiredConfig, find[*corev1.ConfigMap](objects, "monocle-sample-api"))),
		expectCreate(desiredElasticSvc),
		expectUpdate(merged(held, desiredElasticSvc, find[*corev1.Service](objects, "monocle-sample-elastic"))),
		expectCreate(desiredElastic),
		expectUpdate(merged(c.statefulSets, desiredElastic, find[*appsv1.StatefulSet](objects, "monocle-sample-elastic"))),
		expectCreate(desiredAPISvc),
		expectUpdate(merged(held, desiredAPISvc, find[*corev1.Service](objects, "monocle-sample-api"))),
		expectCreate(resources.NewNetworkPolicy(m, "")),
		expectCreate(desiredAPI),
		expectUpdate(merged(c.deployments, desiredAPI, find[*appsv1.Deployment](objects, "monocle-sample-api"))),
		expectCreate(desiredCrawler),
		expectUpdate(merged(c.deployments, desiredCrawler, find[*appsv1.Deployment](objects, "monocle-sample-crawler"))))

	// What the adoption must keep, whichever way the kinds merge.
	secret = written[*corev1.Secret](kubeWrites, "monocle-sample-api")
	for _, k := range []string{resources.CrawlersAPIKeyKey, "GITHUB_TOKEN"} {
		if !bytes.Equal(secret.Data[k], fixtureSecret.Data[k]) {
			t.Errorf("Secret key %s changed from %q to %q", k, fixtureSecret.Data[k], secret.Data[k])
		}
	}
	if !resources.ValidKey(resources.JWKGenKeyKey, secret.Data[resources.JWKGenKeyKey]) {
		t.Errorf("MONOCLE_JWK_GEN_KEY was not generated: %q", secret.Data[resources.JWKGenKeyKey])
	}

	cm := written[*corev1.ConfigMap](kubeWrites, "monocle-sample-api")
	if cm.Data["config.yaml"] != fixtureConfig || len(cm.Data) != 1 || cm.Labels[resources.ManagedByLabel] != resources.ManagedByValue {
		t.Errorf("ConfigMap after adoption: data %v labels %v; want the user's config kept, labelled", cm.Data, cm.Labels)
	}

	for _, name := range []string{"monocle-sample-api", "monocle-sample-elastic"} {
		before := find[*corev1.Service](objects, name)
		after := written[*corev1.Service](kubeWrites, name)
		if !equality.Semantic.DeepEqual(before.Spec, after.Spec) {
			t.Errorf("Service %s: the spec changed before the new pods are ready:\n%v\n%v", name, before.Spec, after.Spec)
		}
	}

	sts := written[*appsv1.StatefulSet](kubeWrites, "monocle-sample-elastic")
	before := find[*appsv1.StatefulSet](objects, "monocle-sample-elastic")
	if !equality.Semantic.DeepEqual(sts.Spec.Selector, before.Spec.Selector) ||
		!equality.Semantic.DeepEqual(sts.Spec.VolumeClaimTemplates, before.Spec.VolumeClaimTemplates) || sts.Spec.ServiceName != before.Spec.ServiceName {
		t.Errorf("an immutable StatefulSet field changed")
	}
	if mounts := sts.Spec.Template.Spec.Containers[0].VolumeMounts; mounts[0].Name != "monocle-sample-elastic-data-volume" || mounts[0].MountPath != "/usr/share/elasticsearch/data" {
		t.Errorf("Elasticsearch mounts %v, want the earlier volume claim template at the data directory", mounts)
	}
	for _, name := range []string{"monocle-sample-api", "monocle-sample-crawler"} {
		d := written[*appsv1.Deployment](kubeWrites, name)
		if !equality.Semantic.DeepEqual(d.Spec.Selector, find[*appsv1.Deployment](objects, name).Spec.Selector) {
			t.Errorf("Deployment %s: the selector changed", name)
		}
		if sel, _ := metav1.LabelSelectorAsSelector(d.Spec.Selector); !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Deployment %s: template labels %v do not match its selector", name, d.Spec.Template.Labels)
		}
		if env := d.Spec.Template.Spec.Containers[0].EnvFrom; len(env) == 0 || env[0].SecretRef == nil || env[0].SecretRef.Name != "monocle-sample-api" {
			t.Errorf("Deployment %s: envFrom %v does not load Secret monocle-sample-api", name, env)
		}
		if d.Spec.Template.Spec.Containers[0].Image != "quay.io/change-metrics/monocle:1.9.0" {
			t.Errorf("Deployment %s: image %s, want the Monocle's spec.image", name, d.Spec.Template.Spec.Containers[0].Image)
		}
	}

	expectActions(t, monocleWrites, "update monocles monocle-sample/status")
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	adopted := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionAdopted)
	if adopted == nil || adopted.Status != metav1.ConditionTrue || adopted.Reason != reasons.AdoptedEarlierOperator {
		t.Errorf("Adopted = %+v, want True/%s", adopted, reasons.AdoptedEarlierOperator)
	}
	if status.ConfigSource != monoclev1alpha1.ConfigFromConfigMap {
		t.Errorf("configSource = %q, want ConfigMap", status.ConfigSource)
	}
	if valid := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionConfigValid); valid == nil || valid.Status != metav1.ConditionTrue {
		t.Errorf("ConfigValid = %+v", valid)
	}
	joined := strings.Join(drain(f), "\n")
	if !strings.Contains(joined, "Normal "+reasons.Adopted+" ") || !strings.Contains(joined, string(pvc.UID)) {
		t.Errorf("no Adopted event naming the PVC's uid in:\n%s", joined)
	}
	if strings.Contains(joined, "Warning") {
		t.Errorf("the adoption recorded warnings:\n%s", joined)
	}
}

// TestAdoptedServicesSwitchOnceNewPodsServe: once the adopted workloads run ready pods with the
// instance's labels, the Services select those alone; before, a sync leaves them alone.
func TestAdoptedServicesSwitchOnceNewPodsServe(t *testing.T) {
	m, objects := loadEarlierFixture(t)
	f := earlierFixtureController(t, m, objects)
	kubeWrites, monocleWrites := f.run()
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)

	// The state after the first sync: every object labelled, so in the cache, and the
	// workloads rolled out.
	// The last write of each object is what the API server holds (a refused create comes
	// before the update).
	last := map[string]runtime.Object{}
	var order []string
	for _, a := range kubeWrites {
		obj := writtenObject(a)
		if obj == nil {
			continue
		}
		key := a.GetResource().Resource + "/" + obj.(metav1.Object).GetName()
		if _, seen := last[key]; !seen {
			order = append(order, key)
		}
		last[key] = obj.DeepCopyObject()
	}
	var adopted []runtime.Object
	for _, key := range order {
		adopted = append(adopted, last[key])
	}
	rollOut(adopted)
	f, kubeWrites, _ = resync(t, status, adopted)
	// The Services get the builder's selector and ports, merged into the adopted ones.
	elastic, api := resources.NewElasticService(m), resources.NewAPIService(m)
	checkActions(t, kubeWrites,
		expectUpdate(merged(f.controller.services, elastic, find[*corev1.Service](adopted, elastic.Name))),
		expectUpdate(merged(f.controller.services, api, find[*corev1.Service](adopted, api.Name))))
	for _, a := range kubeWrites {
		svc := a.(core.UpdateAction).GetObject().(*corev1.Service)
		want := resources.SelectorLabels(m, svc.Labels[resources.ComponentLabel])
		if !equality.Semantic.DeepEqual(svc.Spec.Selector, want) || svc.Spec.Ports[0].TargetPort.StrVal != "http" {
			t.Errorf("Service %s after the switch: selector %v ports %v", svc.Name, svc.Spec.Selector, svc.Spec.Ports)
		}
	}
}

// TestSpecConfigKeepsTheUserConfig: setting spec.config on an adopted Monocle replaces the
// user's config.yaml, which is kept under config.yaml.replaced.
func TestSpecConfigKeepsTheUserConfig(t *testing.T) {
	m, objects := loadEarlierFixture(t)
	fixtureConfig := find[*corev1.ConfigMap](objects, "monocle-sample-api").Data["config.yaml"]
	m.Spec.Config = resources.DefaultConfig
	f := earlierFixtureController(t, m, objects)
	kubeWrites, _ := f.run()
	want := merged(f.controller.configMaps, resources.NewConfigMap(m, resources.DefaultConfig), find[*corev1.ConfigMap](objects, "monocle-sample-api"))
	want.Data[resources.ReplacedConfigKey] = fixtureConfig
	if got := written[*corev1.ConfigMap](kubeWrites, want.Name); got == nil {
		t.Errorf("the ConfigMap was not written: %v", describe(kubeWrites))
	} else {
		checkObject(t, "ConfigMap "+want.Name, want, got)
	}
}

// rollOut gives the workloads among objects the status of a finished rollout.
func rollOut(objects []runtime.Object) {
	for _, obj := range objects {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			r := *o.Spec.Replicas
			o.Status = appsv1.DeploymentStatus{ObservedGeneration: o.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r}
		case *appsv1.StatefulSet:
			o.Status = appsv1.StatefulSetStatus{ObservedGeneration: o.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1,
				CurrentRevision: "r2", UpdateRevision: "r2"}
		}
	}
}

// TestUserConfigMapIsNeverOverwritten: without spec.config the ConfigMap is the user's: a
// valid edit rolls the pods and runs update-idents, an invalid one is reported and rolls
// nothing, and neither is written back.
func TestUserConfigMapIsNeverOverwritten(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	if m.Status.ConfigSource != monoclev1alpha1.ConfigFromConfigMap {
		t.Fatalf("configSource = %q, want ConfigMap", m.Status.ConfigSource)
	}
	cm := find[*corev1.ConfigMap](objects, "demo-api")
	cm.Data[resources.ConfigKey] = "workspaces:\n  - name: mine\n    crawlers: []\n"
	f, kubeWrites, status := resync(t, m, objects)
	// The pods roll to the user's config, whose idents are applied.
	in := builtInputs(m, objects, cm.Data[resources.ConfigKey])
	api, crawler := resources.NewAPIDeployment(m, in), resources.NewCrawlerDeployment(m, in)
	checkActions(t, kubeWrites,
		expectUpdate(merged(f.controller.deployments, api, find[*appsv1.Deployment](objects, api.Name))),
		expectUpdate(merged(f.controller.deployments, crawler, find[*appsv1.Deployment](objects, crawler.Name))),
		expectCreate(resources.NewUpdateIdentsJob(m, in.ConfigHash, bundledAccess(m, objects))))
	if status.Status.ConfigHash != resources.ConfigHash(cm.Data[resources.ConfigKey]) {
		t.Errorf("configHash %q is not the user's config's", status.Status.ConfigHash)
	}

	cm.Data[resources.ConfigKey] = "workspaces: 42\n"
	_, kubeWrites, status = resync(t, m, objects)
	expectActions(t, kubeWrites)
	if valid := condition(t, status, monoclev1alpha1.ConditionConfigValid); valid.Status != metav1.ConditionFalse ||
		valid.Reason != reasons.InvalidConfig || !strings.Contains(valid.Message, "ConfigMap demo-api") {
		t.Errorf("ConfigValid = %+v, want False/InvalidConfig naming the ConfigMap", valid)
	}

	// Deleted: it is made anew with the default config.
	var kept []runtime.Object
	for _, obj := range objects {
		if obj != runtime.Object(cm) {
			kept = append(kept, obj)
		}
	}
	_, kubeWrites, _ = resync(t, m, kept)
	if len(kubeWrites) == 0 {
		t.Fatal("no write, want the ConfigMap created")
	}
	checkAction(t, 0, expectCreate(resources.NewConfigMap(m, resources.DefaultConfig)), kubeWrites[0])
}

// TestEarlierJobOfAnotherOwnerIsLeft: a Job named update-idents-job that the Monocle does not
// control is not deleted.
func TestEarlierJobOfAnotherOwnerIsLeft(t *testing.T) {
	m, objects := loadEarlierFixture(t)
	find[*batchv1.Job](objects, EarlierUpdateIdentsJob).OwnerReferences = nil
	f := earlierFixtureController(t, m, objects)
	kubeWrites, _ := f.run()
	for _, d := range describe(kubeWrites) {
		if strings.HasPrefix(d, "delete jobs") {
			t.Errorf("deleted a Job the Monocle does not control: %s", d)
		}
	}
}

// TestForeignAPISecretWithTokenVariables: a Secret "<name>-api" the Monocle does not control,
// with a config naming a token variable, is a name conflict reported in the status; the sync
// does not fail on the missing Secret (it once dereferenced it).
func TestForeignAPISecretWithTokenVariables(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Config = githubConfig
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "demo-api", Namespace: m.Namespace},
		Data: map[string][]byte{"OTHER": []byte("1")}}
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.uncached = []runtime.Object{foreign}
	kubeWrites, monocleWrites := f.run()
	for _, d := range describe(kubeWrites) {
		if d == "update secrets demo-api" {
			t.Errorf("wrote the foreign Secret")
		}
	}
	expectActions(t, monocleWrites, "update monocles demo/status")
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	if d := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionDegraded); d == nil || d.Reason != reasons.NameConflict {
		t.Errorf("Degraded = %+v, want NameConflict", d)
	}
	if s := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionSecretsReady); s == nil || s.Reason != reasons.TokenMissing {
		t.Errorf("SecretsReady = %+v, want TokenMissing", s)
	}
}
