package day2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// newMonocle is Monocle name of the default namespace, as the controller's tests make it.
func newMonocle(name string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{
		TypeMeta:   metav1.TypeMeta{APIVersion: monoclev1alpha1.SchemeGroupVersion.String(), Kind: "Monocle"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: "uid-0b6f6a36", Generation: 1},
	}
}

// oidcConfig is a config.yaml whose auth_provider is OIDC.
const oidcConfig = "auth:\n  enforce_auth: true\n  auth_provider:\n    oidc_provider_name: keycloak\n    oidc_issuer_url: https://sso.example.com/realms/x\n    oidc_client_id: monocle\nworkspaces:\n  - name: demo\n    crawlers: []\n"
