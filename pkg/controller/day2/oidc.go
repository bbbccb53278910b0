package day2

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// OIDCCondition is the OIDCReady condition of m with the config cfg in force (nil when
// none was parsed): nil when config.yaml has no OIDC auth_provider. Monocle 1.11.2 sets its
// session cookie Secure and SameSite=Strict (src/Monocle/Api/Server.hs), which a browser
// never sends back over plain HTTP: with an http:// public URL every OIDC login fails
// without a word.
func OIDCCondition(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config) *metav1.Condition {
	if cfg == nil || cfg.OIDCClientSecretVariable == "" {
		return nil
	}
	url := resources.PublicURL(m)
	cond := &metav1.Condition{Type: monoclev1alpha1.ConditionOIDCReady, Status: metav1.ConditionTrue, Reason: reasons.OIDCOverHTTPS,
		Message: fmt.Sprintf("The OIDC auth_provider's logins come back to %s over HTTPS", url)}
	if !strings.HasPrefix(url, "https://") {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.OIDCNeedsHTTPS
		cond.Message = fmt.Sprintf("config.yaml's auth_provider is OIDC but the public URL %s is not HTTPS: Monocle's session cookie is Secure and SameSite=Strict, so browsers drop it and every login fails silently; serve the web UI over HTTPS (ingress.tls, httpRoute, route, or an https:// publicURL)", url)
	}
	return cond
}
