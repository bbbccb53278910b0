package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// OptionalCRDs are the CRD files of the optional APIs the operator can use, for tests that
// install them.
type OptionalCRDs struct {
	// HTTPRoute is the Gateway API's HTTPRoute CRD, from the sigs.k8s.io/gateway-api module
	// the repository requires (config/crd/standard).
	HTTPRoute string
	// ReferenceGrant is the Gateway API's ReferenceGrant CRD, from the same module.
	ReferenceGrant string
	// Route is OpenShift's Route CRD, a fixture in test/testdata/crds (its header names the
	// openshift/api commit it comes from).
	Route string
}

// PrometheusOperatorModule is the prometheus-operator release whose CRDs the tests install
// (example/prometheus-operator-crd of its module, from the Go module proxy).
const PrometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// MonitoringCRD returns the path of the monitoring.coreos.com CRD file of resource (for
// example "servicemonitors") in PrometheusOperatorModule, downloading the module into the
// module cache when it is not there.
func MonitoringCRD(ctx context.Context, resource string) (string, error) {
	dir, err := moduleDir(ctx, PrometheusOperatorModule)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_"+resource+".yaml"), nil
}

// ECKModule is the ECK (Elastic Cloud on Kubernetes) release whose Elasticsearch CRD the tests
// install (config/crds/v1/resources of its module, from the Go module proxy), the API a
// Monocle's spec.elasticsearch.elasticsearchRef names.
const ECKModule = "github.com/elastic/cloud-on-k8s/v3@v3.5.0"

// ECKElasticsearchCRD returns the path of the elasticsearches.elasticsearch.k8s.elastic.co CRD
// file in ECKModule, downloading the module into the module cache when it is not there.
func ECKElasticsearchCRD(ctx context.Context) (string, error) {
	dir, err := moduleDir(ctx, ECKModule)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "crds", "v1", "resources", "elasticsearch.k8s.elastic.co_elasticsearches.yaml"), nil
}

// moduleDir returns the module cache directory of module ("path@version"), downloading it
// with `go mod download` when it is not there.
func moduleDir(ctx context.Context, module string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", module).Output()
	if err != nil {
		return "", fmt.Errorf("downloading %s: %w", module, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("downloading %s: %v %s", module, err, mod.Error)
	}
	return mod.Dir, nil
}

// FindOptionalCRDs locates the optional APIs' CRD files of the repository at root; the Gateway
// API module is found with `go list -m` (and downloaded into the module cache if needed).
func FindOptionalCRDs(ctx context.Context, root string) (OptionalCRDs, error) {
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		return OptionalCRDs{}, fmt.Errorf("finding the Gateway API module: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return OptionalCRDs{}, fmt.Errorf("the Gateway API module is not in the module cache: run go mod download")
	}
	return OptionalCRDs{
		HTTPRoute:      filepath.Join(dir, "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"),
		ReferenceGrant: filepath.Join(dir, "config", "crd", "standard", "gateway.networking.k8s.io_referencegrants.yaml"),
		Route:          filepath.Join(root, "test", "testdata", "crds", "route.openshift.io_routes.yaml"),
	}, nil
}

// ReferenceGrantCRDName is the name of the Gateway API's ReferenceGrant CRD
// (OptionalCRDs.ReferenceGrant).
const ReferenceGrantCRDName = "referencegrants.gateway.networking.k8s.io"

// InstallReferenceGrants applies the Gateway API's ReferenceGrant CRD (FindOptionalCRDs) and
// waits up to 60 s until it is Established. It returns the CRD file, for a test that removes
// it (kubectl delete -f).
func (e *Env) InstallReferenceGrants(ctx context.Context) (string, error) {
	crds, err := FindOptionalCRDs(ctx, e.Root)
	if err != nil {
		return "", err
	}
	if out, err := e.Kubectl.Run(ctx, "apply", "--server-side", "-f", crds.ReferenceGrant); err != nil {
		return "", fmt.Errorf("applying the ReferenceGrant CRD: %v: %s", err, out)
	}
	return crds.ReferenceGrant, e.Kubectl.WaitEstablished(ctx, ReferenceGrantCRDName)
}
