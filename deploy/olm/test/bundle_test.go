// Package test validates the OLM bundle deploy/olm/bundle with operator-framework's own
// validation (github.com/operator-framework/api, the library operator-sdk bundle validate
// uses), in a module of its own: that library needs controller-runtime, which the operator's
// go.mod must not carry.
package test

import (
	"os"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

// TestBundleValidates loads the bundle as OLM does and runs the default bundle validators
// plus the OperatorHub and good-practices suites (operator-sdk bundle validate
// --select-optional suite=operatorframework): no error, and no warning.
func TestBundleValidates(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir("../bundle")
	if err != nil {
		t.Fatal(err)
	}
	if bundle.CSV == nil || len(bundle.V1CRDs) != 1 {
		t.Fatalf("the bundle has CSV %v and %d CRDs, want one of each", bundle.CSV != nil, len(bundle.V1CRDs))
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
	)
	results := validators.Validate(bundle, map[string]string{"k8s-version": "1.30"})
	for _, r := range results {
		for _, e := range r.Errors {
			t.Errorf("%s: error: %v", r.Name, e)
		}
		for _, w := range r.Warnings {
			if w.Level == errors.LevelWarn && !justified(w.Error()) {
				t.Errorf("%s: warning: %v", r.Name, w)
			}
		}
	}
}

// justifiedWarnings are the warnings the bundle keeps on purpose, each with its reason.
var justifiedWarnings = map[string]string{
	// The rule is on policy/v1 PodDisruptionBudgets (the operator's client uses policy/v1);
	// RBAC rules name no version, so the validator cannot tell it from policy/v1beta1.
	"Migrate the API(s) for poddisruptionbudgets": "false positive: RBAC rules have no API version",
	// The earlier operator (v0.0.2) published in channel alpha: its users' Subscriptions
	// follow alpha, and must be offered this release, which adopts their Monocles.
	`channel(s) ["alpha"] are not following the recommended naming convention`: "the earlier operator's channel",
}

func justified(warning string) bool {
	for text := range justifiedWarnings {
		if strings.Contains(warning, text) {
			return true
		}
	}
	return false
}

// TestUpgradeGraph: the CSV replaces the previous release's (hack/previous-release, the
// release the upgrade tests start from), so that OLM offers this release to its installs, and
// its olm.skipRange takes every release from the earlier operator's v0.0.2 on straight here.
func TestUpgradeGraph(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir("../bundle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../../hack/previous-release")
	if err != nil {
		t.Fatal(err)
	}
	var previous string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			previous = strings.TrimPrefix(f[0], "v")
		}
	}
	csv := bundle.CSV
	if want := "monocle-operator.v" + previous; csv.Spec.Replaces != want {
		t.Errorf("spec.replaces = %q, want %q (hack/previous-release)", csv.Spec.Replaces, want)
	}
	if want := ">=0.0.2 <" + csv.Spec.Version.String(); csv.Annotations["olm.skipRange"] != want {
		t.Errorf("olm.skipRange = %q, want %q", csv.Annotations["olm.skipRange"], want)
	}
}
