// Package elastictest is a programmable fake Elasticsearch for tests of code that uses
// package elastic: an httptest.Server answering registered routes with canned JSON or a
// handler, recording every request, and failing the test on a request no route answers.
//
// Like Elasticsearch 7.17, every answer carries the X-Elastic-Product: Elasticsearch header
// that the official Go client checks, and errors have Elasticsearch's shape,
// {"error":{"root_cause":[...],"type":..,"reason":..},"status":..}.
package elastictest

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Request is one request the fake received.
type Request struct {
	// Method is the HTTP method, e.g. "PUT".
	Method string
	// Path is the URL path, e.g. "/_snapshot/backups".
	Path string
	// Query is the parsed query string.
	Query url.Values
	// Body is the request body; empty when there was none.
	Body []byte
	// Header is the request's header, e.g. its Authorization.
	Header http.Header
}

// Server is a fake Elasticsearch. Routes are matched on method and exact path; the last
// registration for a route wins. It is safe for concurrent use.
type Server struct {
	// URL is the base URL to hand to elastic.New, e.g. "http://127.0.0.1:39021", or
	// "https://127.0.0.1:39021" for NewTLSServer's.
	URL string
	// CA is, for NewTLSServer's, the PEM of the certificate the fake serves (self-signed, for
	// 127.0.0.1 and example.com: httptest's); nil for NewServer's.
	CA []byte

	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]http.Handler
	log    []Request
}

// NewServer starts a fake with no routes, serving plain HTTP; it is closed when the test
// ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, routes: map[string]http.Handler{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// NewTLSServer starts a fake with no routes, serving HTTPS with a certificate that only a
// client trusting CA accepts; it is closed when the test ends.
func NewTLSServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, routes: map[string]http.Handler{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	s.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	t.Cleanup(s.Close)
	return s
}

// Transport returns a transport that reaches the fake at URL, trusting CA for
// NewTLSServer's (httptest's client transport). The fake listens on 127.0.0.1, a loopback
// address that elastic.NewTransport refuses: a test of anything but that refusal gives its
// client this one.
func (s *Server) Transport() *http.Transport {
	return s.srv.Client().Transport.(*http.Transport)
}

// Close stops the fake: later requests get "connection refused". Closing twice is harmless.
func (s *Server) Close() { s.srv.Close() }

// Handle routes method and path (e.g. "GET", "/_cluster/health") to h. The fake sets the
// product header before calling h.
func (s *Server) Handle(method, path string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[method+" "+path] = h
}

// Reply routes method and path to a canned answer: status and body, sent as JSON.
func (s *Server) Reply(method, path string, status int, body string) {
	s.Handle(method, path, JSON(status, body))
}

// ReplyError routes method and path to an Elasticsearch error answer of the given status,
// type and reason (see Error).
func (s *Server) ReplyError(method, path string, status int, errType, reason string) {
	s.Handle(method, path, Error(status, errType, reason))
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// RequestsTo returns the requests received so far for method and path, in order.
func (s *Server) RequestsTo(method, path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body, Header: r.Header.Clone()})
	h, ok := s.routes[r.Method+" "+r.URL.Path]
	s.mu.Unlock()
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	if !ok {
		s.t.Errorf("elastictest: unexpected request %s %s", r.Method, r.URL.RequestURI())
		Error(http.StatusBadRequest, "elastictest_no_route", "no route for "+r.Method+" "+r.URL.Path).ServeHTTP(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// JSON answers with status and body as application/json.
func JSON(status int, body string) http.Handler {
	return Raw(status, "application/json; charset=UTF-8", body)
}

// Raw answers with status, content type and body as given, e.g. an HTML error page from a
// proxy.
func Raw(status int, contentType, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
}

// Error answers with Elasticsearch's error body for status, type and reason, e.g. 404,
// "snapshot_missing_exception", "[backups:snap-1] is missing".
func Error(status int, errType, reason string) http.Handler {
	cause := map[string]string{"type": errType, "reason": reason}
	body, _ := json.Marshal(map[string]any{
		"error": map[string]any{
			"root_cause": []map[string]string{cause},
			"type":       errType,
			"reason":     reason,
		},
		"status": status,
	})
	return JSON(status, string(body))
}

// Slow waits d, or until the client goes away, before passing the request to h: a
// stand-in for an Elasticsearch too busy to answer in time.
func Slow(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	})
}
