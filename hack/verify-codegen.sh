#!/usr/bin/env bash
# Fails when the generated code under pkg/generated, the deepcopy functions, the CRD
# manifest, the Helm chart's copies of deploy/ (its CRD, files/ and generated templates) or the
# OLM bundle are stale: it regenerates them into a temporary tree and diffs.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
TMP="$(mktemp -d)"
trap 'rm -rf "${TMP}"' EXIT

OUTPUT_ROOT="${TMP}/tree" bash "${REPO_ROOT}/hack/update-codegen.sh" >/dev/null

status=0
for path in pkg/generated pkg/apis deploy/01-crd.yaml deploy/helm/monocle-operator/crds deploy/helm/monocle-operator/files \
  deploy/helm/monocle-operator/templates/deployment.yaml deploy/helm/monocle-operator/templates/serviceaccount.yaml \
  deploy/olm/bundle; do
  if ! diff -Naupr "${REPO_ROOT}/${path}" "${TMP}/tree/${path}"; then
    status=1
  fi
done
if [[ ${status} -ne 0 ]]; then
  echo "Generated files are stale: run hack/update-codegen.sh" >&2
  exit 1
fi
echo "Generated files are up to date."
