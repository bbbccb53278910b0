# monocle-operator: `make local` runs the operator on a local control plane; `make test` runs
# every test. See README.md.

SHELL := /usr/bin/env bash
GO ?= go
BIN_DIR := bin
LOCAL_DIR ?= _output/local
IMAGE ?= quay.io/change-metrics/monocle-operator:dev
# Integration tests start the local control plane; the first build of its binaries takes
# about ten minutes, later runs reuse the cache.
TEST_TIMEOUT ?= 60m

.PHONY: all build test test-unit test-integration generate verify control-plane local cluster-up cluster-down image clean bench

all: build

## build: build the operator binary into bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BIN_DIR)/monocle-operator ./cmd/monocle-operator

## generate: regenerate deepcopy, clientset, listers, informers and the CRD
generate:
	hack/update-codegen.sh

## verify: fail when generated files are stale, code is not gofmt'ed or go vet complains
verify:
	hack/verify-codegen.sh
	@files="$$(gofmt -l cmd pkg hack test)"; if [[ -n "$$files" ]]; then echo "not gofmt'ed: $$files"; exit 1; fi
	$(GO) vet ./...

## control-plane: build and cache etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
control-plane:
	hack/build-control-plane.sh

## test-unit: unit tests (fake clientsets, golden files); no control plane
test-unit:
	$(GO) test -short -count=1 ./...

## test-integration: tests against a real local control plane (integration, e2e, hostile
## input), one package at a time: each starts its own control plane, and two at once would
## compete for the machine's cores. The fault-injection suite runs in test-faults.
test-integration: control-plane
	$(GO) test -timeout $(TEST_TIMEOUT) -count=1 -p 1 $$($(GO) list ./test/... | grep -v /test/faults)

## test: everything CI runs: verify, unit tests, the control-plane tests, then the
## fault-injection suite at full size
test: verify test-unit test-integration test-faults

## local: start a local control plane, install the CRD, run the operator, apply the sample
## Monocle, wait until it is Ready and keep it all running until interrupted (Ctrl-C)
local: build control-plane
	hack/run-local.sh "$(LOCAL_DIR)"

## cluster-up / cluster-down: only the local control plane, in $(LOCAL_DIR)
cluster-up: control-plane
	$(GO) run ./hack/localcluster up --dir "$(LOCAL_DIR)"

cluster-down:
	$(GO) run ./hack/localcluster down --dir "$(LOCAL_DIR)"

## image: build the operator's container image (needs a container engine)
image:
	docker build -t $(IMAGE) .

clean:
	rm -rf $(BIN_DIR) _output

## bench: measure the operator on a local control plane and print a table of figures with
## their targets (9-14 minutes on 2 cores; BENCH_FLAGS=-quick for about 5). Never part of test.
bench: control-plane
	$(GO) run ./test/bench $(BENCH_FLAGS)

.PHONY: test-faults test-faults-short

## test-faults: the fault-injection suite at full size (issue 7: 100 Monocles in 10
## namespaces, 12 operator kills, 10 leader changes, 3 API server and 3 etcd restarts, ...;
## issue 11: 5 adoptions of earlier-operator Monocles with the operator killed midway)
## on a local control plane; prints a summary table, also written to _output/faults-summary.md.
## FAULTS_SEED=<n> replays another seed. About 10 minutes on 2 cores; part of test.
test-faults: control-plane
	$(GO) test -v -count=1 -timeout $(TEST_TIMEOUT) ./test/faults/ -args -faults.full -faults.report=$(CURDIR)/_output/faults-summary.md

## test-faults-short: the short variant of the fault-injection suite, a few minutes
test-faults-short: control-plane
	$(GO) test -v -count=1 -timeout $(TEST_TIMEOUT) ./test/faults/ -args -faults.report=$(CURDIR)/_output/faults-summary.md
