#!/usr/bin/env bash
# Runs the operator's main job on a local control plane (see test/localcluster): starts etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and a kwok node in DIR, installs the
# CRD, runs bin/monocle-operator against it, applies deploy/samples/monocle.yaml, waits until
# the Monocle is Ready and shows what the operator made. Everything keeps running until
# interrupted (Ctrl-C), then it is all stopped. Containers never really start under kwok.
#
# Usage: hack/run-local.sh [DIR]   (default _output/local; `make local` builds first)
# MONOCLE_OPERATOR_BIN names another operator binary than bin/monocle-operator (tests).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${REPO_ROOT}"
DIR="$(mkdir -p "${1:-_output/local}" && cd "${1:-_output/local}" && pwd -P)"
OPERATOR="${MONOCLE_OPERATOR_BIN:-${REPO_ROOT}/bin/monocle-operator}"
[[ -x "${OPERATOR}" ]] || { echo "missing ${OPERATOR}: run make build" >&2; exit 1; }

# The control plane's tool, built before anything starts rather than run with `go run`: a stop
# must not compile (minutes on a cold cache), and a Ctrl-C during this build stops it at once.
LOCALCLUSTER="${DIR}/localcluster"
go build -o "${LOCALCLUSTER}" ./hack/localcluster

operator_pid=""
# cleanup must not depend on stdout: with `make local | tee log`, Ctrl-C also ends tee, and a
# write to the closed pipe would kill this script (SIGPIPE) or fail it (set -e) before the
# control plane is stopped. So SIGPIPE is ignored, every message may fail, and what the stop
# prints also goes to DIR/stop.log.
cleanup() {
  trap - EXIT
  # A second Ctrl-C while stopping must not cut the stop short and leave components running;
  # the stop takes seconds.
  trap '' INT TERM PIPE
  set +e
  say() { echo "$*" 2>/dev/null; echo "$*" >>"${DIR}/stop.log"; }
  say "Stopping the operator and the local control plane"
  if [[ -n "${operator_pid}" ]]; then
    kill -TERM "${operator_pid}" 2>/dev/null
    wait "${operator_pid}" 2>/dev/null
  fi
  "${LOCALCLUSTER}" down --dir "${DIR}" >>"${DIR}/stop.log" 2>&1
  say "Stopped (log: ${DIR}/stop.log)"
}
trap cleanup EXIT
trap 'cleanup; exit 0' INT TERM

"${LOCALCLUSTER}" down --dir "${DIR}" >/dev/null 2>&1 || true
"${LOCALCLUSTER}" up --dir "${DIR}"
export KUBECONFIG="${DIR}/kubeconfig"

kubectl apply -f deploy/01-crd.yaml
# kubectl wait fails at once, rather than waits, when it reads the new CRD before the API
# server wrote its first status: wait for a status first (up to a minute).
for _ in $(seq 60); do
  [[ -n "$(kubectl get crd/monocles.monocle.monocle.change-metrics.io -o jsonpath='{.status.conditions}')" ]] && break
  sleep 1
done
kubectl wait --for=condition=Established --timeout=60s crd/monocles.monocle.monocle.change-metrics.io

"${OPERATOR}" --kubeconfig "${KUBECONFIG}" --http-address 127.0.0.1:0 --leader-election-namespace default \
  >"${DIR}/operator.log" 2>&1 &
operator_pid=$!
echo "Operator running (pid ${operator_pid}), logs in ${DIR}/operator.log"

kubectl apply -f deploy/samples/monocle.yaml
kubectl wait --for=condition=Ready --timeout=180s monocle/monocle
kubectl get monocles -o wide
kubectl get statefulsets,deployments,services,secrets,configmaps,pvc,pods -l app.kubernetes.io/instance=monocle -o wide

cat <<MSG

The Monocle "monocle" is Ready (pods are simulated by kwok: no container really runs).
Try it:  export KUBECONFIG=${KUBECONFIG}
         kubectl describe monocle monocle
On a real cluster you would reach its web UI with
         kubectl port-forward service/monocle-api 8090:8080
and http://localhost:8090 (status.url); here kwok runs no container to forward to.
Press Ctrl-C to stop everything.
MSG
wait "${operator_pid}"
