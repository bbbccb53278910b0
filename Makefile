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

.PHONY: all build test test-unit test-integration generate verify control-plane local cluster-up cluster-down image clean

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
	$(GO) test -short ./...

## test-integration: tests against a real local control plane
test-integration: control-plane
	$(GO) test -timeout $(TEST_TIMEOUT) -count=1 ./test/...

## test: everything CI runs: verify, unit and integration tests
test: verify control-plane
	$(GO) test -timeout $(TEST_TIMEOUT) -count=1 ./...

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
