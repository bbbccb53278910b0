# monocle-operator: `make local` runs the operator on a local control plane; `make test` runs
# every test. See README.md, and docs/development.md for every target.

SHELL := /usr/bin/env bash
GO ?= go
BIN_DIR := bin
# The release: stamped into the binary (pkg/version), the tag of the operator image in
# deploy/03-operator.yaml (a test keeps the two equal) and in the release manifests.
VERSION ?= v0.2.0
# The commit stamped into the binary; empty outside a git checkout.
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null)
VERSION_PKG := github.com/change-metrics/monocle-operator/pkg/version
# The operator binary's linker flags: stripped, stamped with VERSION and COMMIT.
LDFLAGS = -s -w -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT)
RELEASE_DIR ?= _output/release
LOCAL_DIR ?= _output/local
IMAGE ?= quay.io/change-metrics/monocle-operator:dev
# Integration tests start the local control plane; the first build of its binaries takes
# about ten minutes, later runs reuse the cache.
TEST_TIMEOUT ?= 60m
# promtool, Prometheus's rule checker, built from the Go module proxy at this version into
# bin/tools (about 8 minutes on 2 cores, once) for the e2e tests of the alert rules.
PROMTOOL_VERSION := v0.316.0
# Kept in the user's cache, as the control plane is, so that a fresh clone (CI's) reuses it.
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/monocle-operator/tools
PROMTOOL := $(TOOLS_CACHE)/promtool-$(PROMTOOL_VERSION)/promtool

.PHONY: all build test test-unit test-differential test-proxy test-integration generate verify control-plane local cluster-up cluster-down image clean bench

all: build

## build: build the operator binary and the kubectl plugin (kubectl-monocle) into bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/monocle-operator ./cmd/monocle-operator
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/kubectl-monocle ./cmd/kubectl-monocle

# The platforms the release ships the kubectl plugin for, as GOOS/GOARCH.
PLUGIN_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

## release: stamp NEW_VERSION (such as v0.2.0) everywhere the version is stated, from the
## Makefile's VERSION on (hack/release: the Makefile, deploy/, the chart, kustomization.yaml,
## pkg/version, the README and the plugin's docs), turn CHANGELOG.md's unreleased section
## into the release's, and regenerate the OLM bundle. Then review, commit and tag NEW_VERSION.
.PHONY: release
release:
	@test -n "$(NEW_VERSION)" || { echo "usage: make release NEW_VERSION=v0.2.0" >&2; exit 1; }
	$(GO) run ./hack/release -version $(NEW_VERSION)
	$(MAKE) generate

## release-plugin: the kubectl plugin for each of PLUGIN_PLATFORMS, as
## $(RELEASE_DIR)/kubectl-monocle-$(VERSION)-<os>-<arch>.tar.gz (the binary kubectl-monocle
## inside), and their SHA-256 sums in $(RELEASE_DIR)/kubectl-monocle-$(VERSION).sha256
.PHONY: release-plugin
release-plugin:
	@set -euo pipefail; mkdir -p "$(RELEASE_DIR)"; tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	for platform in $(PLUGIN_PLATFORMS); do \
		os="$${platform%/*}"; arch="$${platform#*/}"; name="kubectl-monocle-$(VERSION)-$$os-$$arch"; \
		mkdir -p "$$tmp/$$name"; \
		CGO_ENABLED=0 GOOS="$$os" GOARCH="$$arch" $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o "$$tmp/$$name/kubectl-monocle" ./cmd/kubectl-monocle; \
		tar -C "$$tmp/$$name" --owner=0 --group=0 --numeric-owner -czf "$(RELEASE_DIR)/$$name.tar.gz" kubectl-monocle; \
		echo "$(RELEASE_DIR)/$$name.tar.gz"; \
	done; \
	cd "$(RELEASE_DIR)" && sha256sum kubectl-monocle-$(VERSION)-*.tar.gz > kubectl-monocle-$(VERSION).sha256

## release-manifests: write $(RELEASE_DIR)/monocle-operator.yaml, the release's install file:
## every object of deploy/ in apply order, with the operator image tagged $(VERSION)
.PHONY: release-manifests
release-manifests:
	$(GO) run ./hack/release-manifests -version $(VERSION) -o $(RELEASE_DIR)/monocle-operator.yaml

## generate: regenerate deepcopy, clientset, listers, informers and the CRD
generate:
	hack/update-codegen.sh

## verify: fail when generated files are stale, code is not gofmt'ed or go vet complains (in the
## operator's module and in the image tools', hack/image)
verify:
	hack/verify-codegen.sh
	@files="$$(gofmt -l cmd pkg hack test deploy)"; if [[ -n "$$files" ]]; then echo "not gofmt'ed: $$files"; exit 1; fi
	$(GO) vet ./...
	cd hack/image && $(GO) vet ./...

## control-plane: build and cache etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
control-plane:
	hack/build-control-plane.sh

## test-unit: unit tests (fake clientsets, golden files), the Helm chart's and OLM bundle's
## tests with Helm's and operator-framework's own code, and the image tools' (hack/image), each
## of these three a module of its own; no control plane. hack/image's test builds the operator
## with -trimpath, which on an empty build cache compiles its dependencies again (minutes on 2
## cores): hence the longer timeout.
test-unit:
	$(GO) test -short -count=1 -timeout 30m ./...
	cd deploy/helm/test && $(GO) test -count=1 ./...
	cd deploy/olm/test && $(GO) test -count=1 ./...
	cd hack/image && $(GO) test -short -count=1 -timeout 30m ./...

## test-integration: tests against a real local control plane (integration, e2e, hostile
## input), one package at a time: each starts its own control plane, and two at once would
## compete for the machine's cores. The fault-injection suite runs in test-faults. The e2e
## tests also run Prometheus's rule tests on deploy/monitoring with promtool (PROMTOOL).
test-integration: control-plane $(PROMTOOL)
	PROMTOOL="$(abspath $(PROMTOOL))" $(GO) test -timeout $(TEST_TIMEOUT) -count=1 -p 1 $$($(GO) list ./test/... | grep -v /test/faults)

## test-oldest: the install of deploy/, the main job, an external cluster through the proxy
## sidecar and hibernation on the oldest
## Kubernetes the operator supports (pkg/version.MinKubernetes), whose control plane
## hack/build-control-plane.sh oldest builds from Go modules and caches like the newest's
OLDEST_TESTS := TestClusterWideInstall$$|TestSampleMonocleLifecycle$$|TestExternalElasticsearch$$|TestHibernation$$
.PHONY: test-oldest
test-oldest: control-plane
	bash hack/build-control-plane.sh oldest
	MONOCLE_KUBERNETES=oldest $(GO) test -timeout $(TEST_TIMEOUT) -count=1 -p 1 ./test/e2e ./test/integration -run '$(OLDEST_TESTS)'

## test-differential: the operator's verdicts on thousands of dates, YAML scalars and numbers
## against those of the Haskell libraries Monocle builds with (hack/test-differential.sh:
## installs Debian's GHC and libraries when missing, builds test/differential/Oracle.hs into
## TOOLS_CACHE, runs TestDifferentialAgainstLibraries); prints the counts and disagreements
test-differential:
	TOOLS_CACHE="$(TOOLS_CACHE)" GO="$(GO)" hack/test-differential.sh

## test-proxy: the Elasticsearch proxy sidecar's nginx.conf with Debian's nginx in front of an
## HTTPS server requiring basic auth (hack/test-proxy.sh: installs nginx when missing)
test-proxy:
	GO="$(GO)" hack/test-proxy.sh

## test: everything CI runs: verify, unit tests, the differential and proxy tests, the
## control-plane tests on the newest and the oldest Kubernetes, then the fault-injection
## suite at full size
test: verify test-unit test-differential test-proxy test-integration test-oldest test-faults

## local: start a local control plane, install the CRD, run the operator, apply the sample
## Monocle, wait until it is Ready and keep it all running until interrupted (Ctrl-C)
local: build control-plane
	hack/run-local.sh "$(LOCAL_DIR)"

## cluster-up / cluster-down: only the local control plane, in $(LOCAL_DIR)
cluster-up: control-plane
	$(GO) run ./hack/localcluster up --dir "$(LOCAL_DIR)"

cluster-down:
	$(GO) run ./hack/localcluster down --dir "$(LOCAL_DIR)"

## docker-image: build the operator's image with a container engine from the Dockerfile
## (distroless base); make image needs none
docker-image:
	docker build --build-arg LDFLAGS="$(LDFLAGS)" -t $(IMAGE) .

clean:
	rm -rf $(BIN_DIR) _output

## bench: measure the operator on a local control plane and print a table of figures with
## their targets (9-14 minutes on 2 cores; BENCH_FLAGS=-quick for about 5). Never part of test.
bench: control-plane
	$(GO) run ./test/bench $(BENCH_FLAGS)

.PHONY: test-faults test-faults-short

## test-faults: the fault-injection suite at full size (100 Monocles in 10 namespaces,
## 12 operator kills, 10 leader changes, 3 API server and 3 etcd restarts, 5 adoptions of
## earlier-operator Monocles with the operator killed midway, ...; see docs/fault-suite.md)
## on a local control plane; prints a summary table, also written to _output/faults-summary.md.
## FAULTS_SEED=<n> replays another seed. About 10 minutes on 2 cores; part of test.
test-faults: control-plane
	$(GO) test -v -count=1 -timeout $(TEST_TIMEOUT) ./test/faults/ -args -faults.full -faults.report=$(CURDIR)/_output/faults-summary.md

## test-faults-short: the short variant of the fault-injection suite, a few minutes
test-faults-short: control-plane
	$(GO) test -v -count=1 -timeout $(TEST_TIMEOUT) ./test/faults/ -args -faults.report=$(CURDIR)/_output/faults-summary.md

.PHONY: image docker-image

IMAGE_REPO ?= quay.io/change-metrics/monocle-operator
IMAGE_DIR ?= _output/image

## image: build the operator's OCI image from scratch, without Docker or any daemon, for
## linux/amd64 and linux/arm64 (hack/image, a module of its own with go-containerregistry,
## run from its directory; it builds the operator in the repository root, and takes
## IMAGE_DIR from there): $(IMAGE_DIR)/layout, an OCI layout whose index
## is tagged $(VERSION), and $(IMAGE_DIR)/monocle-operator-$(VERSION)-linux-amd64.tar for
## docker/podman load; prints the digests. Labelled with VERSION and COMMIT, the binary
## stamped with LDFLAGS. Reproducible: every time in it is SOURCE_DATE_EPOCH, else the last
## commit's time, so two builds of one commit give the same digests.
image:
	$(GO) run -C hack/image . -out "$(IMAGE_DIR)" -repo "$(IMAGE_REPO)" -version "$(VERSION)" -revision "$(COMMIT)" -ldflags "$(LDFLAGS)"

## image-push: push the image make image built ($(IMAGE_DIR)/layout) to $(IMAGE_REPO):$(VERSION),
## every platform, by digest (hack/image/push, go-containerregistry; credentials from
## ~/.docker/config.json); prints <repo>:<tag>@<digest>
.PHONY: image-push
image-push:
	@$(GO) run -C hack/image ./push -layout "$(IMAGE_DIR)/layout" -repo "$(IMAGE_REPO)"

$(PROMTOOL):
	GOBIN="$(abspath $(dir $(PROMTOOL)))" $(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

# cyclonedx-gomod, built from the Go module proxy at this version into bin/tools.
CYCLONEDX_GOMOD_VERSION := v1.9.0
CYCLONEDX_GOMOD := $(BIN_DIR)/tools/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)/cyclonedx-gomod

## sbom: the CycloneDX SBOM of the operator binary (the modules of its linux/amd64 build) into
## $(RELEASE_DIR)/monocle-operator.cdx.json
.PHONY: sbom
sbom: $(CYCLONEDX_GOMOD)
	mkdir -p "$(RELEASE_DIR)"
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(CYCLONEDX_GOMOD) app -json -licenses=false -main cmd/monocle-operator -output "$(RELEASE_DIR)/monocle-operator.cdx.json" .

$(CYCLONEDX_GOMOD):
	GOBIN="$(abspath $(dir $(CYCLONEDX_GOMOD)))" $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION)
