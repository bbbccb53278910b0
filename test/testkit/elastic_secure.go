package testkit

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// This file is the security of FakeElasticsearch for the clusters a Monocle references
// rather than runs (ECK's, one by URL): basic authentication (WithBasicAuth) and TLS with a
// CA the fake generates (WithTLS). A bundled Monocle's Elasticsearch, a Host
// "<name>-elastic.<namespace>.svc", runs with security on, as the bundled StatefulSet does:
// it answers 401 unless the operator's user sends a password (guardBundled), whatever these
// options. The Monocle API's /health is served without credentials.

// FakeElasticOption sets up a FakeElasticsearch at StartFakeElasticsearch.
type FakeElasticOption func(*fakeSecurity)

// WithBasicAuth makes the fake require basic authentication as username with password on
// every request for an Elasticsearch other than a bundled one. A request without
// credentials, or with others, gets Elasticsearch 7.17's 401: a security_exception ("missing
// authentication credentials for REST request [<uri>]", or "unable to authenticate user
// [<user>] for REST request [<uri>]") and the header WWW-Authenticate: Basic
// realm="security" charset="UTF-8" (elastic/elasticsearch v7.17
// DefaultAuthenticationFailureHandler and Exceptions.authenticationError; the contract
// fixture security-unauthorized).
func WithBasicAuth(username, password string) FakeElasticOption {
	return func(s *fakeSecurity) { s.username, s.password = username, password }
}

// WithTLS makes the fake serve HTTPS as well as plain HTTP on its one port: a connection
// that opens with a TLS handshake gets a certificate for the server name it asks (without
// one: localhost, 127.0.0.1 and ::1) signed by a CA the fake generates (CAPEM). A plain
// request for an Elasticsearch other than a bundled one gets its connection closed
// unanswered, as Elasticsearch 7.17 with TLS on HTTP does ("received plaintext http traffic
// on an https channel, closing connection", SecurityNetty4HttpServerTransport).
func WithTLS() FakeElasticOption {
	return func(s *fakeSecurity) { s.tls = true }
}

// fakeSecurity is what the options set; its zero value is no security at all.
type fakeSecurity struct {
	// username and password are the credentials required; username "" requires none.
	username, password string
	tls                bool
	// ca signs the leaf certificates; caPEM is its certificate.
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	caPEM []byte
	// mu guards leaves and plain.
	mu sync.Mutex
	// leaves are the certificates served, by server name.
	leaves map[string]*tls.Certificate
	// plain are the hosts (keyOf's) served in plain HTTP too (ServePlainHTTP).
	plain map[string]bool
	// open are the hosts (keyOf's) served without any security (ServeWithoutSecurity).
	open map[string]bool
}

// basicChallenge is Elasticsearch 7.17's WWW-Authenticate value on plain HTTP.
const basicChallenge = `Basic realm="security" charset="UTF-8"`

// CAPEM is the PEM certificate of the CA the fake's certificates chain to, with WithTLS;
// nil without.
func (f *FakeElasticsearch) CAPEM() []byte { return f.security.caPEM }

// URL is the fake's own URL: https://127.0.0.1:<port> with WithTLS, http://127.0.0.1:<port>
// without. A request to it is for no bundled Elasticsearch, so the options apply.
func (f *FakeElasticsearch) URL() string {
	if f.security.tls {
		return "https://" + f.server.Listener.Addr().String()
	}
	return f.server.URL
}

// ServePlainHTTP makes a fake started WithTLS answer plain HTTP requests for host (as
// Cluster takes it) too, as a cluster whose HTTP layer has no TLS, reached by an http:// URL,
// does; WithBasicAuth still applies.
func (f *FakeElasticsearch) ServePlainHTTP(host string) {
	s := &f.security
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plain == nil {
		s.plain = map[string]bool{}
	}
	s.plain[keyOf(host).host] = true
}

// ServeWithoutSecurity makes the fake answer every request for host (as Cluster takes it), in
// plain HTTP and without credentials, whatever its options: a cluster whose security is off
// (xpack.security.enabled: false, Elasticsearch 7.17's default on its basic license), reached
// by an http:// URL without credentialsSecretRef.
func (f *FakeElasticsearch) ServeWithoutSecurity(host string) {
	s := &f.security
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[string]bool{}
	}
	s.open[keyOf(host).host] = true
}

// guard answers r, a request for the Elasticsearch at host (keyOf's), as a secured
// Elasticsearch would when r is not let through: a plain request with WithTLS (its
// connection closed) unless ServePlainHTTP let host's through, missing or wrong credentials
// with WithBasicAuth (a 401), neither for a host of ServeWithoutSecurity. It reports whether
// it answered.
func (s *fakeSecurity) guard(w http.ResponseWriter, r *http.Request, host string) bool {
	s.mu.Lock()
	plain, open := s.plain[host], s.open[host]
	s.mu.Unlock()
	if open {
		return false
	}
	if s.tls && r.TLS == nil && !plain {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		w.WriteHeader(http.StatusBadRequest)
		return true
	}
	if s.username == "" {
		return false
	}
	user, pass, ok := r.BasicAuth()
	if ok && subtle.ConstantTimeCompare([]byte(user), []byte(s.username))&
		subtle.ConstantTimeCompare([]byte(pass), []byte(s.password)) == 1 {
		return false
	}
	unauthorized(w, r, user, ok)
	return true
}

// guardBundled answers 401, as a bundled node with security on does, and reports true for a
// request to the Elasticsearch of key without the operator's user
// (resources.ElasticOperatorUser) and a password. The fake does not know the password the
// operator generated: it records the one it accepts, which a test compares with the Secret's
// (BundledPassword), also from a node served without security (ServeBundledWithoutSecurity),
// which lets every request through.
func (f *FakeElasticsearch) guardBundled(w http.ResponseWriter, r *http.Request, key esKey) bool {
	user, pass, ok := r.BasicAuth()
	operator := ok && user == resources.ElasticOperatorUser && pass != ""
	f.mu.Lock()
	if operator {
		f.bundledPasswords[key] = pass
	}
	unsecured := f.unsecured[key]
	f.mu.Unlock()
	if operator || unsecured {
		return false
	}
	unauthorized(w, r, user, ok)
	return true
}

// ServeBundledWithoutSecurity makes the fake answer every request for the bundled node of
// the Monocle namespace/monocle without credentials, as the node of a release before
// security did, until SecureBundled.
func (f *FakeElasticsearch) ServeBundledWithoutSecurity(namespace, monocle string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unsecured[esKey{namespace: namespace, monocle: monocle}] = true
}

// SecureBundled ends ServeBundledWithoutSecurity: the node requires the operator's user
// again, as it does once it runs with security on.
func (f *FakeElasticsearch) SecureBundled(namespace, monocle string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.unsecured, esKey{namespace: namespace, monocle: monocle})
}

// BundledPassword is the password of the operator's user (resources.ElasticOperatorUser)
// that the last authenticated request to the bundled Elasticsearch of the Monocle
// namespace/monocle sent; "" before one.
func (f *FakeElasticsearch) BundledPassword(namespace, monocle string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bundledPasswords[esKey{namespace: namespace, monocle: monocle}]
}

// unauthorized answers 401 as Elasticsearch 7.17 does to a request without valid credentials
// (user, sent when ok).
func unauthorized(w http.ResponseWriter, r *http.Request, user string, ok bool) {
	reason := "missing authentication credentials for REST request [" + r.URL.RequestURI() + "]"
	if ok {
		reason = "unable to authenticate user [" + user + "] for REST request [" + r.URL.RequestURI() + "]"
	}
	header := map[string]any{"WWW-Authenticate": basicChallenge}
	cause := map[string]any{"type": "security_exception", "reason": reason, "header": header}
	body, _ := json.Marshal(map[string]any{
		"error":  map[string]any{"root_cause": []any{cause}, "type": "security_exception", "reason": reason, "header": header},
		"status": http.StatusUnauthorized,
	})
	w.Header().Set("WWW-Authenticate", basicChallenge)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body)
}

// newCA makes the fake's CA.
func (s *fakeSecurity) newCA() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "FakeElasticsearch CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	s.ca, err = x509.ParseCertificate(der)
	s.caKey, s.caPEM = key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	s.leaves = map[string]*tls.Certificate{}
	return err
}

// certificate returns the certificate for the server name a client asks, made on first use.
func (s *fakeSecurity) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := hello.ServerName
	if c := s.leaves[name]; c != nil {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(s.leaves)) + 2),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     s.ca.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if name == "" {
		tmpl.Subject.CommonName = "localhost"
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		return nil, fmt.Errorf("fake Elasticsearch certificate for %q: %w", name, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	s.leaves[name] = c
	return c, nil
}

// sniffListener hands its server plain connections as they are and those that open with a
// TLS handshake (first byte 0x16, a handshake record) as *tls.Conn, which net/http serves
// as HTTPS.
type sniffListener struct {
	net.Listener
	config *tls.Config
	conns  chan net.Conn
	// done is closed, and err set, when the listener fails or is closed.
	done chan struct{}
	err  error
}

func newSniffListener(l net.Listener, config *tls.Config) *sniffListener {
	s := &sniffListener{Listener: l, config: config, conns: make(chan net.Conn), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *sniffListener) run() {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			s.err = err
			close(s.done)
			return
		}
		go s.sniff(c)
	}
}

// sniff reads the first byte of c, then hands c on.
func (s *sniffListener) sniff(c net.Conn) {
	r := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	first, err := r.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		_ = c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: r}
	if first[0] == 0x16 {
		out = tls.Server(out, s.config)
	}
	select {
	case s.conns <- out:
	case <-s.done:
		_ = out.Close()
	}
}

// Accept implements net.Listener.
func (s *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, s.err
	}
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
