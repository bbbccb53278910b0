package day2

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

func TestOIDCCondition(t *testing.T) {
	oidc, err := monocleconfig.Parse(oidcConfig)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := monocleconfig.Parse("workspaces:\n  - name: demo\n    crawlers: []\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		cfg       *monocleconfig.Config
		spec      monoclev1alpha1.MonocleSpec
		want      metav1.ConditionStatus
		reason    string
		absent    bool
		inMessage string
	}{
		"no OIDC: no condition":          {cfg: plain, absent: true},
		"no config parsed: no condition": {cfg: nil, absent: true},
		"OIDC on the default http URL":   {cfg: oidc, want: metav1.ConditionFalse, reason: reasons.OIDCNeedsHTTPS, inMessage: "http://localhost:8090"},
		"OIDC behind an Ingress without TLS": {cfg: oidc, spec: monoclev1alpha1.MonocleSpec{Ingress: &monoclev1alpha1.IngressSpec{Host: "m.example.com"}},
			want: metav1.ConditionFalse, reason: reasons.OIDCNeedsHTTPS, inMessage: "http://m.example.com"},
		"OIDC behind an Ingress with TLS": {cfg: oidc, spec: monoclev1alpha1.MonocleSpec{Ingress: &monoclev1alpha1.IngressSpec{Host: "m.example.com", TLS: &monoclev1alpha1.IngressTLS{}}},
			want: metav1.ConditionTrue, reason: reasons.OIDCOverHTTPS},
		"OIDC with an https publicURL": {cfg: oidc, spec: monoclev1alpha1.MonocleSpec{PublicURL: "https://monocle.example.com"},
			want: metav1.ConditionTrue, reason: reasons.OIDCOverHTTPS},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newMonocle("demo")
			m.Spec = tc.spec
			c := OIDCCondition(m, tc.cfg)
			if tc.absent {
				if c != nil {
					t.Fatalf("condition %+v, want none", c)
				}
				return
			}
			if c == nil || c.Status != tc.want || c.Reason != tc.reason || !strings.Contains(c.Message, tc.inMessage) {
				t.Errorf("condition %+v, want %s/%s mentioning %q", c, tc.want, tc.reason, tc.inMessage)
			}
		})
	}
}
