package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestNetworkPolicy: the Monocle's NetworkPolicy exists on the real control plane as built (the
// API server accepts it) and a change of its rules is put back. No network plugin enforces it
// here: what it admits is unit-tested against the pods' labels (pkg/resources).
func TestNetworkPolicy(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "netpol"
	startDay2(t, ns)
	p, err := env.Kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, "m", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Ingress) != 2 || p.Spec.Ingress[0].Ports[0].Port.IntValue() != 9200 || p.Spec.Ingress[1].Ports[0].Port.IntValue() != 8080 {
		t.Fatalf("NetworkPolicy rules = %+v", p.Spec.Ingress)
	}
	// Someone opens Elasticsearch to every pod: the rule is restored.
	env.Kubectl.Must(t, "patch", "networkpolicy", "-n", ns, "m", "--type=json", "-p", `[{"op":"remove","path":"/spec/ingress/0/from"}]`)
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the Elasticsearch rule restored", func() error {
		p, err := env.Kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, "m", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.Spec.Ingress) != 2 || len(p.Spec.Ingress[0].From) != 1 {
			return fmt.Errorf("rules %+v", p.Spec.Ingress)
		}
		return nil
	})
}
