package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// crdUnderTest is deploy/01-crd.yaml as kube-apiserver holds it: its internal form, the
// OpenAPI schema validator and the CEL validator of its one version. The validators are
// apiextensions-apiserver's own (the module of the API server's version the operator builds
// against), so the tests judge a Monocle as kube-apiserver would at admission, cost budgets
// included.
type crdUnderTest struct {
	internal   *apiextensions.CustomResourceDefinition
	structural *structuralschema.Structural
	schema     schemavalidation.SchemaValidator
	cel        *cel.Validator
}

var loadCRD = sync.OnceValues(func() (*crdUnderTest, error) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "deploy", "01-crd.yaml"))
	if err != nil {
		return nil, err
	}
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &v1); err != nil {
		return nil, err
	}
	out := &crdUnderTest{internal: &apiextensions.CustomResourceDefinition{}}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, out.internal, nil); err != nil {
		return nil, err
	}
	// kube-apiserver's create strategy records the storage version.
	out.internal.Status.StoredVersions = []string{out.internal.Spec.Versions[0].Name}
	// The conversion moves a schema every version shares to spec.validation.
	v := out.internal.Spec.Validation
	if v == nil {
		v = out.internal.Spec.Versions[0].Schema
	}
	props := v.OpenAPIV3Schema
	if out.structural, err = structuralschema.NewStructural(props); err != nil {
		return nil, err
	}
	if out.schema, _, err = schemavalidation.NewSchemaValidator(props); err != nil {
		return nil, err
	}
	out.cel = cel.NewValidator(out.structural, true, celconfig.PerCallLimit)
	return out, nil
})

// crd returns loadCRD's result or fails t.
func crd(t *testing.T) *crdUnderTest {
	t.Helper()
	c, err := loadCRD()
	if err != nil {
		t.Fatalf("loading deploy/01-crd.yaml: %v", err)
	}
	return c
}

// monocle is a Monocle named m with spec given in YAML (flow style is fine), as unstructured
// JSON values.
func monocle(t *testing.T, spec string) map[string]any {
	t.Helper()
	var s any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatalf("spec %s: %v", spec, err)
	}
	return map[string]any{
		"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1", "kind": "Monocle",
		"metadata": map[string]any{"name": "m", "namespace": "team"},
		"spec":     s,
	}
}

// validate returns what kube-apiserver's schema and CEL validation say of obj, a create when
// old is nil, an update otherwise, and the fields it does not know ("unknown field", which
// kubectl's strict field validation refuses). It prunes obj.
func (c *crdUnderTest) validate(obj, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	for _, path := range pruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, field.Invalid(field.NewPath(path), nil, fmt.Sprintf("unknown field %q", path)))
	}
	if old == nil {
		errs = append(errs, schemavalidation.ValidateCustomResource(nil, obj, c.schema)...)
	} else {
		errs = append(errs, schemavalidation.ValidateCustomResourceUpdate(nil, obj, old, c.schema)...)
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := c.cel.Validate(context.Background(), nil, c.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// admissionCase is a spec and what admission must say of it: nothing when want is empty,
// else an error whose field path and text hold every string of want.
type admissionCase struct {
	name, spec string
	want       []string
}

// refused builds an admissionCase that must be refused with field named in the error.
func refused(name, spec, field string, texts ...string) admissionCase {
	return admissionCase{name: name, spec: spec, want: append([]string{field}, texts...)}
}

// accepted builds an admissionCase that must pass.
func accepted(name, spec string) admissionCase { return admissionCase{name: name, spec: spec} }

// runAdmissionCases creates a Monocle of each case's spec against the CRD.
func runAdmissionCases(t *testing.T, cases []admissionCase) {
	c := crd(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := c.validate(monocle(t, tc.spec), nil)
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Errorf("refused: %v; want it accepted", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("accepted; want it refused with %q", tc.want)
			}
			all := errs.ToAggregate().Error()
			for _, s := range tc.want {
				if !strings.Contains(all, s) {
					t.Errorf("the error %q does not say %q", all, s)
				}
			}
		})
	}
}

// TestCRDIsValid checks the CRD as kube-apiserver does when it is applied: its schema is
// structural and every validation rule compiles within the cost budgets (a rule over a map
// or a string without a bound is refused: "estimated rule cost exceeds budget").
func TestCRDIsValid(t *testing.T) {
	c := crd(t)
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), c.internal); len(errs) > 0 {
		for _, e := range errs {
			t.Error(e)
		}
	}
}

// oldestServedKubernetes is the oldest kube-apiserver that accepts the CRD's rules, whose
// CEL environment for new rules is that of the release before it (apiserver's
// environment.DefaultCompatibilityVersion): the quantity library (isQuantity), introduced in
// that environment at 1.28, makes it 1.29. The IP and CIDR libraries (isIP, ip(...)), at
// 1.30, would make it 1.31: the URL rules use regexes instead.
var oldestServedKubernetes = version.MajorMinor(1, 29)

// TestCRDRulesCompileOnOldestKubernetes compiles every rule of the CRD in the CEL
// environment of new rules of oldestServedKubernetes, so that a rule needing a newer library
// fails here rather than at kubectl apply on an older cluster.
func TestCRDRulesCompileOnOldestKubernetes(t *testing.T) {
	c := crd(t)
	compat := version.MajorMinor(oldestServedKubernetes.Major(), oldestServedKubernetes.Minor()-1)
	envSet := environment.MustBaseEnvSet(compat)
	rules := 0
	var walk func(path string, s *structuralschema.Structural, root bool)
	walk = func(path string, s *structuralschema.Structural, root bool) {
		if s == nil {
			return
		}
		if len(s.XValidations) > 0 {
			results, err := cel.Compile(s, model.SchemaDeclType(s, root), celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
			if err != nil {
				t.Errorf("%s: %v", path, err)
			}
			for i, r := range results {
				rules++
				if r.Error != nil {
					t.Errorf("%s: rule %q does not compile on Kubernetes %s: %v", path, s.XValidations[i].Rule, oldestServedKubernetes, r.Error)
				}
			}
		}
		for name, p := range s.Properties {
			walk(path+"."+name, &p, false)
		}
		walk(path+"[]", s.Items, false)
		if s.AdditionalProperties != nil {
			walk(path+"{}", s.AdditionalProperties.Structural, false)
		}
	}
	walk("", c.structural, true)
	if rules == 0 {
		t.Fatal("no rule found")
	}
	t.Logf("%d rules compile in the CEL environment of Kubernetes %s", rules, oldestServedKubernetes)
}
