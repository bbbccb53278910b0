#!/usr/bin/env bash
# Regenerates everything derived from pkg/apis: deepcopy functions, the typed clientset,
# listers and informers under pkg/generated (k8s.io/code-generator's kube_codegen.sh), and the
# CRD manifest in deploy/ with its OpenAPI schema (controller-gen, descriptions joined into
# paragraphs by hack/crd-descriptions), the Helm chart's copies of deploy/ (hack/helm-chart:
# its CRD, files/, and the templates of the operator's Deployment, Service,
# PodDisruptionBudget and ServiceAccount) and the OLM bundle (hack/olm-bundle).
# The generator versions are
# pinned in hack/tools/go.mod. Set OUTPUT_ROOT to generate into another tree (verify-codegen.sh).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
OUTPUT_ROOT="${OUTPUT_ROOT:-${REPO_ROOT}}"
MODULE="github.com/change-metrics/monocle-operator"
TOOLS_BIN="${XDG_CACHE_HOME:-${HOME}/.cache}/monocle-operator/tools/bin"
mkdir -p "${TOOLS_BIN}"

CODEGEN_PKG="$(cd "${REPO_ROOT}/hack/tools" && go mod download k8s.io/code-generator && go list -m -f '{{.Dir}}' k8s.io/code-generator)"
# kube_codegen.sh installs its generators into GOBIN.
export GOBIN="${TOOLS_BIN}"
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

cd "${REPO_ROOT}"
if [[ "${OUTPUT_ROOT}" != "${REPO_ROOT}" ]]; then
  # Generate in a copy so the working tree is left alone.
  mkdir -p "${OUTPUT_ROOT}"
  cp -a "${REPO_ROOT}/go.mod" "${REPO_ROOT}/go.sum" "${REPO_ROOT}/hack" "${OUTPUT_ROOT}/"
  mkdir -p "${OUTPUT_ROOT}/pkg" "${OUTPUT_ROOT}/deploy"
  cp -a "${REPO_ROOT}/pkg/apis" "${REPO_ROOT}/pkg/version" "${OUTPUT_ROOT}/pkg/"
  cp -a "${REPO_ROOT}/deploy/02-rbac.yaml" "${REPO_ROOT}/deploy/02-rbac-aggregated.yaml" "${REPO_ROOT}/deploy/03-operator.yaml" \
    "${REPO_ROOT}/deploy/samples" "${REPO_ROOT}/deploy/monitoring" "${OUTPUT_ROOT}/deploy/"
  cp -a "${REPO_ROOT}/Makefile" "${OUTPUT_ROOT}/"
  cd "${OUTPUT_ROOT}"
fi

kube::codegen::gen_helpers \
  --boilerplate hack/boilerplate.go.txt \
  pkg/apis

# kube_codegen.sh removes stale generated files it finds in these folders.
mkdir -p pkg/generated/clientset pkg/generated/listers pkg/generated/informers
kube::codegen::gen_client \
  --with-watch \
  --output-dir pkg/generated \
  --output-pkg "${MODULE}/pkg/generated" \
  --boilerplate hack/boilerplate.go.txt \
  pkg/apis

(cd "${REPO_ROOT}/hack/tools" && GOBIN="${TOOLS_BIN}" go install sigs.k8s.io/controller-tools/cmd/controller-gen)
# controller-gen keeps the Go comments' line breaks in the descriptions; crd-descriptions
# joins them into paragraphs, so that kubectl explain reads well.
"${TOOLS_BIN}/controller-gen" crd paths=./pkg/apis/... output:crd:stdout | go run ./hack/crd-descriptions > deploy/01-crd.yaml.tmp
mv deploy/01-crd.yaml.tmp deploy/01-crd.yaml
# The Helm chart's copies of deploy/ (its CRD, RBAC rules, alert rules and the templates of
# the operator's objects), and the OLM bundle.
go run ./hack/helm-chart
go run ./hack/olm-bundle
