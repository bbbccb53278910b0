package main

import (
	"context"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	apiversion "k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/change-metrics/monocle-operator/pkg/controller"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The operator's clients implement the controller's.
var _ controller.KubeClient = (*kubeClients)(nil)

func TestKubeClientsShareOneRateLimiter(t *testing.T) {
	k, err := newKubeClients(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 7, Burst: 9})
	if err != nil {
		t.Fatal(err)
	}
	limiter := k.core.RESTClient().GetRateLimiter()
	if limiter == nil || limiter.QPS() != 7 {
		t.Fatalf("core/v1 client's rate limiter: %v, want one of 7 QPS", limiter)
	}
	for group, client := range map[string]rest.Interface{
		"apps": k.apps.RESTClient(), "batch": k.batch.RESTClient(), "policy": k.policy.RESTClient(),
		"networking": k.networking.RESTClient(), "storage": k.storage.RESTClient(),
		"discovery": k.discovery.RESTClient(),
	} {
		if got := client.GetRateLimiter(); got != limiter {
			t.Errorf("%s client's rate limiter is not the core/v1 client's", group)
		}
	}
	if _, err := newKubeClients(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 7}); err == nil {
		t.Error("a QPS without a burst was accepted")
	}
}

// unsupportedWatchList is a typed fake client that declares, as the fake clientset does,
// that it cannot stream lists (WatchList), so that the reflector lists and then watches.
type unsupportedWatchList struct {
	typedcorev1.SecretInterface
}

func (unsupportedWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func TestInformerOfFiltersAndIndexes(t *testing.T) {
	labelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ours",
		Labels: map[string]string{resources.ManagedByLabel: resources.ManagedByValue}}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "theirs"}}
	elsewhere := labelled.DeepCopy()
	elsewhere.Namespace = "elsewhere"
	cs := fake.NewClientset(labelled, other, elsewhere)

	k := &kubeInformers{resync: time.Hour, tweak: func(lo *metav1.ListOptions) {
		lo.LabelSelector = resources.ManagedByLabel + "=" + resources.ManagedByValue
	}}
	secrets := informerOf(k, unsupportedWatchList{cs.CoreV1().Secrets("ns")}, &corev1.Secret{},
		corev1.SchemeGroupVersion.WithResource("secrets"), corelisters.NewSecretLister)
	if len(k.informers) != 1 || k.informers[0] != secrets.Informer() {
		t.Fatalf("informerOf added %d informers, want the one it returned", len(k.informers))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k.start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), secrets.Informer().HasSynced) {
		t.Fatal("the cache did not sync")
	}
	got, err := secrets.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "ours" || got[0].Namespace != "ns" {
		t.Errorf("the cache holds %v, want only ns/ours (labelled, in the client's namespace)", got)
	}
	byNamespace, err := secrets.Informer().GetIndexer().ByIndex(cache.NamespaceIndex, "ns")
	if err != nil || len(byNamespace) != 1 {
		t.Errorf("namespace index: %d objects, error %v; want 1", len(byNamespace), err)
	}
}

// TestAllGroupsClientsNotLinked builds the binary and checks, in its symbol table, that the
// clientset and the informer factory of every API group (k8s.io/client-go/kubernetes and
// k8s.io/client-go/informers) are not linked in, while the core/v1 client is.
func TestAllGroupsClientsNotLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on $PATH")
	}
	bin := filepath.Join(t.TempDir(), "monocle-operator")
	// go test's own build flags, as TestVersionFlag: only the link is new.
	if out, err := exec.Command(goTool, "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	defer f.Close()
	symbols, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	unwanted := []string{"k8s.io/client-go/kubernetes.", "k8s.io/client-go/informers.(*sharedInformerFactory)"}
	coreClient := false
	for _, s := range symbols {
		for _, prefix := range unwanted {
			if strings.HasPrefix(s.Name, prefix) {
				t.Errorf("linked: %s", s.Name)
			}
		}
		coreClient = coreClient || strings.HasPrefix(s.Name, "k8s.io/client-go/kubernetes/typed/core/v1.(*CoreV1Client)")
	}
	if !coreClient {
		t.Error("the core/v1 client is not in the symbol table: the check read no symbols it could match")
	}
}

// TestCheckServerVersion: the operator starts against version.MinKubernetes and later, and
// refuses an older API server, or one whose version it cannot read, with an error that names
// the versions.
func TestCheckServerVersion(t *testing.T) {
	for gitVersion, want := range map[string]string{
		"v1.30.0":         "",
		"v1.30.14+k3s1":   "",
		"v1.36.3":         "",
		"v1.31.0-eks-123": "",
		"v1.29.6":         "the API server runs Kubernetes v1.29.6; monocle-operator needs 1.30 or later",
		"v1.27.0-gke.100": "the API server runs Kubernetes v1.27.0-gke.100; monocle-operator needs 1.30 or later",
		"":                `the API server's version ""`,
	} {
		d := &fakediscovery.FakeDiscovery{Fake: &k8stesting.Fake{}, FakedServerVersion: &apiversion.Info{GitVersion: gitVersion}}
		err := checkServerVersion(d)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", gitVersion, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want one containing %q", gitVersion, err, want)
		}
	}
}
