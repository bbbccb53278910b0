package main

// The operator's image is built from scratch (hack/image) and holds no CA certificate file:
// this package compiles Mozilla's root certificates into the binary and makes them the
// roots crypto/x509 falls back to when the system has none. Where the system provides roots
// (a Debian host, a base image with ca-certificates), those are used instead.
import _ "golang.org/x/crypto/x509roots/fallback"
