# syntax=docker/dockerfile:1
# The operator's image: a static binary on distroless "static", running as the non-root user
# 65532. Build it with `make image` (docker build -t $(IMAGE) .); only go.mod, go.sum, cmd/ and
# pkg/ are sent to the builder (.dockerignore).
#
# Reproducible: the Go toolchain is the one go.mod names (the builder image is only its
# starting point), -trimpath drops local paths, an empty -buildid and -buildvcs=false keep the
# binary independent of the build machine and the checkout. Pin the two base images by digest
# (FROM golang:1.26@sha256:...) to make the image itself reproducible.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=auto
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/root/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags "-s -w -buildid=" -o /out/monocle-operator ./cmd/monocle-operator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/monocle-operator /monocle-operator
# distroless' "nonroot" user; deploy/03-operator.yaml runs the pod as the same uid.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/monocle-operator"]
