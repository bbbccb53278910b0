package elastic

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"
)

// NewTransport returns the transport New uses by default: connection, TLS handshake and
// response-header timeouts of its own, so a call made with a long deadline still cannot
// hang on a dead peer, and few idle connections, since the operator talks to each
// Elasticsearch rarely. An https:// cluster's certificate is verified against the system's
// roots.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}
}

// NewTransportWithCA is NewTransport verifying an https:// cluster's certificate against
// the certificates of caPEM (e.g. ECK's <name>-es-http-certs-public ca.crt), or against the
// system's roots when caPEM is empty.
func NewTransportWithCA(caPEM []byte) (*http.Transport, error) {
	return TrustCA(NewTransport(), caPEM)
}

// TrustCA returns a copy of t that verifies servers' certificates against the PEM
// certificates of caPEM only (TLS 1.2 at least), or t itself when caPEM is empty. The error
// reports a caPEM that holds no certificate.
func TrustCA(t *http.Transport, caPEM []byte) (*http.Transport, error) {
	if len(caPEM) == 0 {
		return t, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("elasticsearch CA: no PEM certificate in it")
	}
	out := t.Clone()
	if out.TLSClientConfig == nil {
		out.TLSClientConfig = &tls.Config{}
	}
	out.TLSClientConfig.RootCAs = pool
	out.TLSClientConfig.MinVersion = tls.VersionTLS12
	return out, nil
}
