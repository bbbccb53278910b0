# syntax=docker/dockerfile:1
# The operator's image: a static binary on distroless "static", running as the non-root user
# 65532. Build it with `make docker-image` (docker build --build-arg LDFLAGS="$(LDFLAGS)" -t
# $(IMAGE) .) when a container engine can pull the base images; `make image` builds an
# equivalent image from scratch without any engine (hack/image). Only go.mod, go.sum, cmd/
# and pkg/ are sent to the builder (.dockerignore).
#
# Reproducible: the Go toolchain is the one go.mod names (the builder image is only its
# starting point), -trimpath drops local paths, an empty -buildid and -buildvcs=false keep the
# binary independent of the build machine and the checkout. Pin the two base images by digest
# (FROM golang:1.26@sha256:...) to make the image itself reproducible.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# The linker flags; make docker-image passes the Makefile's (stripped, version and commit
# stamped, as make build and make image use).
ARG LDFLAGS="-s -w"
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=auto
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags "${LDFLAGS} -buildid=" -o /out/monocle-operator ./cmd/monocle-operator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/monocle-operator /monocle-operator
# distroless' "nonroot" user; deploy/03-operator.yaml runs the pod as the same uid.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/monocle-operator"]
