package integration

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// loopbackName returns a name of this machine's hosts file that resolves to a loopback
// address and does not say so (not localhost or the like, which admission refuses as
// written): the operator, run on this machine, resolves it as a Monocle author's DNS name
// could resolve in a cluster. The test is skipped on a machine without one.
func loopbackName(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/etc/hosts")
	if err != nil {
		t.Skipf("no hosts file: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if ip, err := netip.ParseAddr(fields[0]); err != nil || !ip.Unmap().IsLoopback() {
			continue
		}
		for _, name := range fields[1:] {
			if strings.Contains(name, "localhost") || strings.Contains(name, "loopback") {
				continue
			}
			// As the operator resolves it: the hosts file first, so no DNS query.
			addrs, err := net.DefaultResolver.LookupNetIP(t.Context(), "ip", name)
			if err == nil && len(addrs) > 0 && addrs[0].Unmap().IsLoopback() {
				return name
			}
		}
	}
	t.Skip("the hosts file names no loopback address but localhost's")
	return ""
}

// TestExternalURLResolvingToLoopbackIsRefused: a Monocle author whose external URL names a
// host resolving to loopback (a form admission accepts) gets ElasticsearchHealthy False
// ElasticsearchAddressRefused, and Degraded, while the operator runs with
// --operand-dial-address (which sends every other request to the fake): the fake received
// nothing for that host.
func TestExternalURLResolvingToLoopbackIsRefused(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	host := loopbackName(t)
	ns := "address-refused"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	author := tenant(t, ns)
	author.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	manifest := strings.Replace(day2Monocle, "spec:\n", "spec:\n  elasticsearch: {external: {url: 'http://"+host+":9200'}}\n", 1)
	if out, err := author.RunStdin(t.Context(), manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionElasticsearchHealthy, metav1.ConditionFalse, reasons.ElasticsearchAddressRefused)
	if !strings.Contains(c.Message, "host "+host+" resolves to ") || !strings.Contains(c.Message, "which is loopback") {
		t.Errorf("ElasticsearchHealthy message %q does not say that %s resolves to a loopback address", c.Message, host)
	}
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionDegraded, metav1.ConditionTrue, reasons.ElasticsearchAddressRefused)
	if n := env.Elastic.Received(host); n != 0 {
		t.Errorf("the fake Elasticsearch received %d requests for %s, want none", n, host)
	}
}
