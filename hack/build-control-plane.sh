#!/usr/bin/env bash
# Builds a local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok) from Go modules, as pinned
# by hack/control-plane/go.mod and go.sum, into a cache directory, and copies
# the kwok Stage documents that test/localcluster needs next to it.
#
# No container engine and no prebuilt binaries are needed: only Go and the Go
# module proxy. The first build takes ~7 minutes on 2 cores; binaries already
# in the cache are not rebuilt, so a second run is instant. If the build
# inputs (go.mod, go.sum, build flags) change, everything is rebuilt.
# docs/development.md ("Set-up" and "What the local control plane cannot show") and
# the doc comment of test/localcluster give the background.
#
# Environment:
#   MONOCLE_CONTROL_PLANE_CACHE  cache dir (default:
#       ${XDG_CACHE_HOME:-$HOME/.cache}/monocle-operator/control-plane/v1.36.3)
#   MONOCLE_CONTROL_PLANE_REBUILD=1  rebuild binaries even if present
#
# Usage: hack/build-control-plane.sh [newest|oldest]
#   newest (the default): the Kubernetes the tests run on, from hack/control-plane.
#   oldest: the oldest Kubernetes the operator supports (pkg/version.MinKubernetes), from
#       hack/control-plane-oldest: its kube-apiserver, kube-controller-manager and
#       kube-scheduler, with etcd, kwok and the kwok stages of the newest build.
#
# Output: progress on stderr; the only line on stdout is the bin directory.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
which="${1:-newest}"
# Keep in sync with the module's go.mod and test/localcluster's versions (the cache path
# depends on them).
case "${which}" in
  newest) KUBE_VERSION=v1.36.3; module_dir="${repo_root}/hack/control-plane" ;;
  oldest) KUBE_VERSION=v1.30.14; module_dir="${repo_root}/hack/control-plane-oldest" ;;
  *) echo "usage: $0 [newest|oldest]" >&2; exit 2 ;;
esac
cache_dir="${MONOCLE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/monocle-operator/control-plane/${KUBE_VERSION}}"
bin_dir="${cache_dir}/bin"
stages_dir="${cache_dir}/kwok-stages"
stamp_file="${bin_dir}/.build-stamp"

log() { echo "[build-control-plane] $*" >&2; }

command -v go >/dev/null 2>&1 || { log "error: go is not on PATH"; exit 1; }
if ! grep -q "^[[:space:]]*k8s.io/kubernetes ${KUBE_VERSION}\$" "${module_dir}/go.mod"; then
  log "error: ${module_dir}/go.mod does not require k8s.io/kubernetes ${KUBE_VERSION}; update KUBE_VERSION here and in test/localcluster"
  exit 1
fi

cd "${module_dir}"
# Never let a go.work above us, or the caller's GOFLAGS (e.g. -mod=vendor),
# change which module graph is used: go.mod/go.sum here are authoritative.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
# Static binaries, like the upstream release builds; also avoids needing gcc.
export CGO_ENABLED="${CGO_ENABLED:-0}"

# Kubernetes binaries report their version (GET /version, user agents) from
# variables its release scripts set with -X; without them they say
# "v0.0.0-master+$Format:%H$", which kubectl version cannot even parse.
kube_minor="${KUBE_VERSION#v1.}"
kube_minor="${kube_minor%%.*}"
kube_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X ${p}.gitVersion=${KUBE_VERSION}"
  kube_ldflags+=" -X ${p}.gitMajor=1"
  kube_ldflags+=" -X ${p}.gitMinor=${kube_minor}"
  kube_ldflags+=" -X ${p}.gitCommit="
  kube_ldflags+=" -X ${p}.gitTreeState=clean"
  kube_ldflags+=" -X ${p}.buildDate=1970-01-01T00:00:00Z"
done

# name|package|ldflags, built in this order, one at a time (2 cores).
targets=(
  "kube-apiserver|k8s.io/kubernetes/cmd/kube-apiserver|${kube_ldflags}"
  "kube-controller-manager|k8s.io/kubernetes/cmd/kube-controller-manager|${kube_ldflags}"
  "kube-scheduler|k8s.io/kubernetes/cmd/kube-scheduler|${kube_ldflags}"
)
if [[ "${which}" == newest ]]; then
  targets=("etcd|go.etcd.io/etcd/server/v3|-s -w" "${targets[@]}" "kwok|sigs.k8s.io/kwok/cmd/kwok|-s -w")
else
  # etcd, kwok and the stages are the newest build's, copied beside these binaries.
  newest_bin="$("${repo_root}/hack/build-control-plane.sh" newest)"
fi

# Everything that decides what the binaries are: rebuild when it changes.
stamp="$( { cat go.mod go.sum; go env GOVERSION; echo "CGO_ENABLED=${CGO_ENABLED}"; printf '%s\n' "${targets[@]}"; [[ -z "${newest_bin:-}" ]] || cat "${newest_bin}/.build-stamp"; } | sha256sum | cut -d' ' -f1)"

up_to_date=1
for t in "${targets[@]}" "etcd|" "kwok|"; do
  [[ -x "${bin_dir}/${t%%|*}" ]] || up_to_date=0
done
for f in node-initialize.yaml node-heartbeat.yaml pod-ready.yaml pod-complete.yaml pod-delete.yaml pvc-provision.yaml storage-class.yaml; do
  [[ -f "${stages_dir}/${f}" ]] || up_to_date=0
done
if [[ "${up_to_date}" == 1 && "${MONOCLE_CONTROL_PLANE_REBUILD:-0}" != "1" && -f "${stamp_file}" && "$(cat "${stamp_file}")" == "${stamp}" ]]; then
  log "up to date in ${cache_dir}"
  echo "${bin_dir}"
  exit 0
fi

mkdir -p "${bin_dir}"
rebuild="${MONOCLE_CONTROL_PLANE_REBUILD:-0}"
if [[ -f "${stamp_file}" && "$(cat "${stamp_file}")" != "${stamp}" ]] || [[ ! -f "${stamp_file}" && -n "$(ls -A "${bin_dir}")" ]]; then
  log "build inputs changed (go.mod, go.sum, Go version or flags): rebuilding everything"
  rebuild=1
fi
rm -f "${stamp_file}"

total_start=$(date +%s)
for t in "${targets[@]}"; do
  IFS='|' read -r name pkg ldflags <<<"${t}"
  out="${bin_dir}/${name}"
  if [[ -x "${out}" && "${rebuild}" != "1" ]]; then
    log "${name}: already built (${out}), skipping"
    continue
  fi
  log "${name}: building ${pkg} ..."
  start=$(date +%s)
  # Build to a temporary name and rename, so an interrupted build never leaves
  # a partial binary that a later run would skip.
  tmp="${out}.tmp.$$"
  rm -f "${tmp}"
  if ! go build -trimpath -ldflags="${ldflags}" -o "${tmp}" "${pkg}"; then
    rm -f "${tmp}"
    log "${name}: build FAILED"
    exit 1
  fi
  mv -f "${tmp}" "${out}"
  log "${name}: built in $(( $(date +%s) - start ))s"
done

if [[ -n "${newest_bin:-}" ]]; then
  log "etcd, kwok and the kwok stages: copying the newest build's from ${newest_bin}"
  install -m 0755 "${newest_bin}/etcd" "${newest_bin}/kwok" "${bin_dir}/"
  rm -rf "${stages_dir}"
  cp -R "$(dirname "${newest_bin}")/kwok-stages" "${stages_dir}"
  echo "${stamp}" >"${stamp_file}"
  log "done in $(( $(date +%s) - total_start ))s"
  echo "${bin_dir}"
  exit 0
fi

# kwok v0.8 exits with "no stages found" unless given Stage documents; they
# ship in its module under kustomize/stage/.
log "kwok stages: copying into ${stages_dir}"
go mod download sigs.k8s.io/kwok
kwok_dir="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
if [[ -z "${kwok_dir}" || ! -d "${kwok_dir}/kustomize/stage" ]]; then
  log "error: kwok module source not found (got '${kwok_dir}')"
  exit 1
fi
src="${kwok_dir}/kustomize/stage"
stage_files=(
  "${src}"/node/fast/node-initialize.yaml
  "${src}"/node/heartbeat/node-*.yaml
  "${src}"/pod/fast/pod-*.yaml
  "${src}"/volume/fast/p*.yaml
  "${src}"/volume/fast/storage-class.yaml
)
# Start from an empty directory so files dropped from this list do not linger.
rm -rf "${stages_dir}"
mkdir -p "${stages_dir}"
for f in "${stage_files[@]}"; do
  [[ -f "${f}" ]] || { log "error: missing kwok stage file ${f}"; exit 1; }
  # Module cache files are read-only: install gives the copy a normal mode.
  install -m 0644 "${f}" "${stages_dir}/$(basename "${f}")"
done
log "kwok stages: $(ls "${stages_dir}" | tr '\n' ' ')"

echo "${stamp}" >"${stamp_file}"
log "done in $(( $(date +%s) - total_start ))s"
echo "${bin_dir}"
