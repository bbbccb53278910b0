// Package proxy tests the nginx.conf of the Elasticsearch proxy sidecar
// (resources.ProxyConfig) with a real NGINX: Debian's, whose path MONOCLE_NGINX gives
// (hack/test-proxy.sh installs it). Behind it is an HTTPS server with a CA of its own that
// requires basic auth, as an ECK Elasticsearch does; the test sends plain HTTP requests to the
// proxy, as Monocle does, and checks what reaches the server.
package proxy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

const (
	user     = "monocle"
	password = `pa:ss "word"`
)

// record is what the server behind the proxy received: the last request, and how many.
type record struct {
	auth, host, sni, path string
	tls                   bool
	bodyLen, requests     int
}

// seen is the record the server writes and the test reads.
type seen struct {
	mu sync.Mutex
	r  record
}

// reset empties the record.
func (s *seen) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r = record{}
}

// get returns a copy of the record.
func (s *seen) get() record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r
}

// backend is an Elasticsearch stand-in: 401 without the right basic auth, else 200 with a
// small JSON body, recording what it saw.
func backend(s *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.r = record{requests: s.r.requests + 1, auth: r.Header.Get("Authorization"), host: r.Host, path: r.URL.Path,
			bodyLen: len(body), tls: r.TLS != nil}
		if r.TLS != nil {
			s.r.sni = r.TLS.ServerName
		}
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="security"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"green","received":%d}`, len(body))
	})
}

// newCA returns a CA's certificate PEM and a function that issues server certificates for
// localhost and 127.0.0.1 under it.
func newCA(t *testing.T, name string) ([]byte, func() tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	issue := func() tls.Certificate {
		leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		leaf := &x509.Certificate{
			SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: leafKey}
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), issue
}

// freePort returns a port of 127.0.0.1 that nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer that NGINX's stderr and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProxy writes the nginx.conf of target (and its CA) into a directory of the test, runs
// nginx on it and waits for its health listener; it returns the proxy's URL and NGINX's
// stderr (its error and access logs).
func startProxy(t *testing.T, nginx string, target resources.ElasticsearchTarget) (string, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	// Run as root, NGINX's workers run as nobody: they must reach the temporary directory.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	temp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(temp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(temp, 0o777); err != nil {
		t.Fatal(err)
	}
	port, health := freePort(t), freePort(t)
	layout := resources.PodProxyLayout
	layout.Listen, layout.HealthListen = fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", health)
	layout.Dir, layout.Temp = dir, temp
	conf, err := resources.ProxyConfig(target, layout)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, resources.ProxyConfigKey), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if target.CA != nil {
		if err := os.WriteFile(filepath.Join(dir, resources.ProxyCAKey), target.CA, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs := &syncBuffer{}
	// -e stderr: the error log before the configuration is read (NGINX 1.19.5 and later).
	cmd := exec.Command(nginx, "-e", "stderr", "-c", filepath.Join(dir, resources.ProxyConfigKey))
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("nginx exited: %v\n%s\nnginx.conf:\n%s", err, logs, conf)
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", health))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("health listener answered %d, want 204", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen after 10s: %v\n%s", err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), logs
}

func TestProxyWithNginx(t *testing.T) {
	nginx := os.Getenv("MONOCLE_NGINX")
	if nginx == "" {
		t.Skip("MONOCLE_NGINX is unset: run hack/test-proxy.sh, or set it to an nginx binary")
	}
	caPEM, issue := newCA(t, "elasticsearch-ca")
	otherCA, _ := newCA(t, "another-ca")
	s := &seen{}
	secure := httptest.NewUnstartedServer(backend(s))
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{issue()}}
	secure.StartTLS()
	defer secure.Close()
	plain := httptest.NewServer(backend(s))
	defer plain.Close()
	secureURL := "https://localhost:" + strings.TrimPrefix(secure.URL, "https://127.0.0.1:")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))

	cases := []struct {
		name   string
		target resources.ElasticsearchTarget
		// status is what the proxy answers; upstream whether the request reached the server;
		// auth the Authorization header it carried there.
		status   int
		upstream bool
		auth     string
	}{
		{"https with the cluster's CA and credentials", resources.ElasticsearchTarget{URL: secureURL, Username: user, Password: password, CA: caPEM},
			http.StatusOK, true, basic},
		{"https with another CA", resources.ElasticsearchTarget{URL: secureURL, Username: user, Password: password, CA: otherCA},
			http.StatusBadGateway, false, ""},
		{"https without credentials", resources.ElasticsearchTarget{URL: secureURL, CA: caPEM},
			http.StatusUnauthorized, true, ""},
		{"http with credentials", resources.ElasticsearchTarget{URL: plain.URL, Username: user, Password: password},
			http.StatusOK, true, basic},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.target.Kind = "External"
			proxy, logs := startProxy(t, nginx, tc.target)
			s.reset()
			// A bulk-sized body: NGINX's default limit, 1 MiB, would refuse it with 413.
			body := bytes.Repeat([]byte(`{"index":{}}`+"\n"), 300_000)
			resp, err := http.Post(proxy+"/_bulk", "application/x-ndjson", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("the proxy answered %d %s, want %d\n%s", resp.StatusCode, answer, tc.status, logs)
			}
			got := s.get()
			if (got.requests > 0) != tc.upstream {
				t.Fatalf("requests that reached the server: %d, want some: %v\n%s", got.requests, tc.upstream, logs)
			}
			if tc.upstream {
				u := strings.TrimPrefix(strings.TrimPrefix(tc.target.URL, "https://"), "http://")
				wantTLS := strings.HasPrefix(tc.target.URL, "https://")
				if got.auth != tc.auth || got.host != u || got.tls != wantTLS || got.path != "/_bulk" || got.bodyLen != len(body) {
					t.Errorf("the server saw Authorization %q, Host %q, TLS %v, path %s, a body of %d bytes; want %q, %q, %v, /_bulk, %d",
						got.auth, got.host, got.tls, got.path, got.bodyLen, tc.auth, u, wantTLS, len(body))
				}
				if wantTLS && got.sni != "localhost" {
					t.Errorf("SNI %q, want localhost", got.sni)
				}
				t.Logf("%d %s; the server saw Authorization %q, Host %s, TLS %v (SNI %q), %d bytes", resp.StatusCode, answer, got.auth, got.host, got.tls, got.sni, got.bodyLen)
			}
			// NGINX writes the access log line once the response is sent.
			accessed := fmt.Sprintf(`"POST /_bulk HTTP/1.1" %d `, tc.status)
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), accessed); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("NGINX's access log does not show the request:\n%s", logs)
				}
			}
			out := logs.String()
			if strings.Contains(out, password) || strings.Contains(out, basic[len("Basic "):]) {
				t.Errorf("NGINX's log holds the credentials:\n%s", out)
			}
			if strings.Contains(out, `"GET / HTTP/1.1" 204`) {
				t.Errorf("NGINX logs the probes:\n%s", out)
			}
			t.Logf("access log: %s", firstLine(out, accessed))
			if !tc.upstream {
				if !strings.Contains(out, "upstream SSL certificate verify error") {
					t.Errorf("NGINX's log does not say the certificate failed verification:\n%s", out)
				}
				t.Logf("error log: %s", firstLine(out, "certificate verify"))
			}
		})
	}
}

// firstLine returns the first line of s that holds sub.
func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
