package elastic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/elastic/go-elasticsearch/v7/esapi"
	"github.com/elastic/go-elasticsearch/v7/estransport"
)

// DefaultTimeout bounds a call whose context has no deadline. A context that has one keeps
// it, shorter or longer.
const DefaultTimeout = 5 * time.Second

// Limits on how much of a response body is read: a success body is decoded from at most
// maxBodyBytes (a snapshot list of a few thousand snapshots fits), an error body from at most
// maxErrorBodyBytes.
const (
	maxBodyBytes      = 32 << 20
	maxErrorBodyBytes = 64 << 10
)

// Client is what the controller needs from Elasticsearch 7.17. Every method takes a context
// and applies DefaultTimeout when it has no deadline; every error names the call that failed.
// An implementation is safe for concurrent use.
type Client interface {
	// Health reports the cluster health (GET _cluster/health).
	Health(ctx context.Context) (Health, error)
	// DiskUsage reports the disk of the fullest data node (GET _cat/allocation).
	DiskUsage(ctx context.Context) (Disk, error)
	// Watermarks reports the disk watermarks in force (GET _cluster/settings).
	Watermarks(ctx context.Context) (Watermarks, error)
	// ReadOnlyIndices lists, sorted, the indices blocked by index.blocks.read_only_allow_delete.
	ReadOnlyIndices(ctx context.Context) ([]string, error)
	// ClearReadOnly removes index.blocks.read_only_allow_delete from the indices.
	ClearReadOnly(ctx context.Context, indices ...string) error
	// Indices lists the indices matching a pattern, hidden ones included (GET
	// _cat/indices/<pattern>?expand_wildcards=all).
	Indices(ctx context.Context, pattern string) ([]Index, error)
	// CloseIndices closes indices, which a restore over existing indices requires.
	CloseIndices(ctx context.Context, indices ...string) error
	// DeleteIndex deletes one index; a missing one is not an error.
	DeleteIndex(ctx context.Context, index string) error
	// IndexReplicas reads index.number_of_replicas of the indices matching a pattern, hidden
	// and closed ones included, by index.
	IndexReplicas(ctx context.Context, pattern string) (map[string]int, error)
	// SetIndexReplicas sets index.number_of_replicas of the indices matching a pattern,
	// hidden and closed ones included.
	SetIndexReplicas(ctx context.Context, pattern string, n int) error

	// EnsureRepository registers a snapshot repository unless it is already registered as is.
	EnsureRepository(ctx context.Context, name string, repo Repository) error
	// CheckRepository reports a repository that is not registered as ErrNotFound, without
	// registering it.
	CheckRepository(ctx context.Context, name string) error
	// CreateSnapshot starts a snapshot of indices without waiting for it to finish.
	CreateSnapshot(ctx context.Context, repo, name string, indices []string) error
	// Snapshots lists the snapshots of a repository it can read, oldest first, and the
	// names of those it cannot read.
	Snapshots(ctx context.Context, repo string) ([]Snapshot, []string, error)
	// Snapshot describes one snapshot; ErrNotFound when it does not exist.
	Snapshot(ctx context.Context, repo, name string) (Snapshot, error)
	// SnapshotSize gives the bytes a snapshot references in its repository.
	SnapshotSize(ctx context.Context, repo, name string) (int64, error)
	// DeleteSnapshot deletes a snapshot; one already gone is not an error.
	DeleteSnapshot(ctx context.Context, repo, name string) error
	// Restore starts restoring indices from a snapshot without waiting for it to finish.
	Restore(ctx context.Context, repo, name string, indices []string) error
	// RestoreDone reports whether every index exists, is open and has its primary shards
	// active (GET _cat/indices/<indices>, then GET _cat/shards/<indices>).
	RestoreDone(ctx context.Context, indices []string) (bool, error)

	// CrawlersProgress reports how far each crawler of a workspace index has crawled.
	CrawlersProgress(ctx context.Context, index string) ([]CrawlerProgress, error)
	// CrawlersErrors sums up the errors each crawler of a workspace index stored.
	CrawlersErrors(ctx context.Context, index string) ([]CrawlerErrors, error)

	// CreateOwner creates OwnerIndex recording o as the owner of the cluster's Monocle
	// indices; IsAlreadyExists when the index exists.
	CreateOwner(ctx context.Context, o Owner) error
	// Owner reads the owner OwnerIndex records; ErrNotFound when there is no OwnerIndex.
	Owner(ctx context.Context) (Owner, error)
	// SetOwner records o as the owner in the existing OwnerIndex.
	SetOwner(ctx context.Context, o Owner) error
}

// ErrNotFound matches, with errors.Is, an error from a call that Elasticsearch answered with
// 404 Not Found (a missing snapshot, repository or index).
var ErrNotFound = errors.New("not found")

// StatusError is an HTTP error status from Elasticsearch. Type and Reason come from the error
// body Elasticsearch sends, {"error":{"type":..,"reason":..},"status":..}, for example
// Type "snapshot_missing_exception" with Code 404 (Elasticsearch 7.17 reference, Common
// options, and SnapshotMissingException), or {"error":"text","status":..}.
//
// The body of an answer that is not Elasticsearch's is never quoted: one without the
// X-Elastic-Product: Elasticsearch header (Elasticsearch 7.14 and later send it on every
// answer but those to unauthenticated requests, elastic/elasticsearch#73434; so a 401 need
// not have it) or whose body is not of those shapes (an HTML page from a proxy, another
// service's answer) has NotElasticsearch set and Type and Reason empty: the server at the
// URL may be anything the operator's pod reaches, and its answer is not for the status.
type StatusError struct {
	// Code is the HTTP status code, e.g. 404.
	Code int
	// Type is Elasticsearch's error type, e.g. "index_not_found_exception"; may be empty.
	Type string
	// Reason is Elasticsearch's error reason; may be empty.
	Reason string
	// NotElasticsearch is set when the answer is not Elasticsearch's (see above).
	NotElasticsearch bool
}

// Error returns "status <code> <type>: <reason>", leaving out what is empty, or
// "status <code>: the server did not answer as Elasticsearch 7.17 ..." when
// NotElasticsearch.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %d", e.Code)
	if e.NotElasticsearch {
		b.WriteString(": the server did not answer as Elasticsearch 7.17 (no X-Elastic-Product: Elasticsearch header or no Elasticsearch error body; its body is not quoted)")
		return b.String()
	}
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) hold for a 404, errors.Is(err, ErrUnauthorized) for
// a 401.
func (e *StatusError) Is(target error) bool {
	return (target == ErrNotFound && e.Code == http.StatusNotFound) ||
		(target == ErrUnauthorized && e.Code == http.StatusUnauthorized)
}

// errNotElasticsearch is the error of a successful response without the header every
// Elasticsearch from 7.14 sends, X-Elastic-Product: Elasticsearch.
var errNotElasticsearch = errors.New("the server is not Elasticsearch: its response has no X-Elastic-Product: Elasticsearch header")

// ErrUnauthorized matches, with errors.Is, an error from a call that Elasticsearch answered
// with 401 Unauthorized: the cluster requires credentials and got none or wrong ones (a
// security_exception, "missing authentication credentials for REST request [...]" or
// "unable to authenticate user [...] for REST request [...]", Elasticsearch 7.17
// DefaultAuthenticationFailureHandler).
var ErrUnauthorized = errors.New("unauthorized")

// IsNotFound reports whether err is, or wraps, a 404 from Elasticsearch.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// client implements Client on the official go-elasticsearch client's transport and request
// types (estransport, esapi). It sends each esapi request through the transport itself rather
// than through elasticsearch.Client, whose API value holds a function for each of the
// hundreds of Elasticsearch APIs and so links them all into the binary.
type client struct {
	transport *estransport.Client
	// genuine is set once a successful response carried X-Elastic-Product: Elasticsearch.
	genuine atomic.Bool
	// timeout is DefaultTimeout; tests shorten it.
	timeout time.Duration
}

// Config is how a Client reaches one Elasticsearch.
type Config struct {
	// URL is the cluster's base URL, http://host:port or https://host:port, without
	// credentials (they go in Username and Password, which never appear in an error).
	URL string
	// Username and Password are the basic-auth credentials sent with every request (the
	// go-elasticsearch transport's own, estransport.Config); an empty Username sends none.
	Username, Password string
	// Transport carries the requests; nil means NewTransport(). For an https:// cluster
	// whose certificate chains to a CA of its own, give NewTransportWithCA's.
	Transport http.RoundTripper
}

// New returns a Client for the Elasticsearch at baseURL (e.g. "http://monocle-elastic:9200",
// the bundled node: plain HTTP without authentication), carried by transport (nil means
// NewTransport()). It is NewClient without credentials.
func New(baseURL string, transport http.RoundTripper) (Client, error) {
	return NewClient(Config{URL: baseURL, Transport: transport})
}

// NewClient returns a Client for the Elasticsearch of cfg. The error reports a URL that is
// not absolute http(s), a URL carrying credentials, and a Username without a Password; it
// never quotes a password.
//
// The client does not retry: a failed call is reported, and the controller's next sync is
// the retry. It checks the X-Elastic-Product header of the first successful response, as the
// official client does for 7.14 and later servers (elasticsearch.Client with
// UseResponseCheckOnly), rather than sending an extra GET / first. A cluster that refuses
// the credentials answers 401 with a security_exception: errors.Is(err, ErrUnauthorized).
func NewClient(cfg Config) (Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		// url.Parse's error quotes the URL, which may hold a password: keep its cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("elasticsearch URL: %w", err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("elasticsearch URL %q: credentials belong in the client's Username and Password, not in the URL", u.Redacted())
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("elasticsearch URL %q: want http://host:port or https://host:port", cfg.URL)
	}
	if cfg.Username != "" && cfg.Password == "" {
		// estransport sends basic auth only with both (Client.setReqAuth).
		return nil, fmt.Errorf("elasticsearch credentials: user %q has no password", cfg.Username)
	}
	transport := cfg.Transport
	if transport == nil {
		transport = NewTransport()
	}
	t, err := estransport.New(estransport.Config{URLs: []*url.URL{u}, Username: cfg.Username, Password: cfg.Password,
		Transport: transport, DisableRetry: true})
	if err != nil {
		return nil, fmt.Errorf("elasticsearch client: %w", err)
	}
	return &client{transport: t, timeout: DefaultTimeout}, nil
}

// request is an esapi request type; each has Do(ctx, transport).
type request interface {
	Do(ctx context.Context, transport esapi.Transport) (*esapi.Response, error)
}

// call sends req and returns the status code and body of a response whose status is in ok
// (any 2xx when ok is empty). op names the call in errors, e.g. "GET _cluster/health".
func (c *client) call(ctx context.Context, op string, req request, ok ...int) (int, []byte, error) {
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	res, err := req.Do(ctx, c.transport)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", op, err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 200 && res.StatusCode < 300 && !c.genuine.Load() {
		if res.Header.Get("X-Elastic-Product") != "Elasticsearch" {
			return 0, nil, fmt.Errorf("%s: %w", op, errNotElasticsearch)
		}
		c.genuine.Store(true)
	}
	accepted := res.StatusCode >= 200 && res.StatusCode < 300
	if len(ok) > 0 {
		accepted = false
		for _, code := range ok {
			accepted = accepted || res.StatusCode == code
		}
	}
	if !accepted {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBodyBytes))
		fromElasticsearch := res.Header.Get("X-Elastic-Product") == "Elasticsearch" || res.StatusCode == http.StatusUnauthorized
		return res.StatusCode, nil, fmt.Errorf("%s: %w", op, parseStatusError(res.StatusCode, body, fromElasticsearch))
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBodyBytes+1))
	if err != nil {
		return res.StatusCode, nil, fmt.Errorf("%s: reading body: %w", op, err)
	}
	if len(body) > maxBodyBytes {
		return res.StatusCode, nil, fmt.Errorf("%s: body longer than %d bytes", op, maxBodyBytes)
	}
	return res.StatusCode, body, nil
}

// callJSON is call followed by decoding the body into v; what names the API in a decoding
// error, e.g. "_cluster/health".
func (c *client) callJSON(ctx context.Context, op, what string, req request, v any) error {
	_, body, err := c.call(ctx, op, req)
	if err != nil {
		return err
	}
	return decode(what, body, v)
}

// decode unmarshals body into v, naming the API in the error.
func decode(what string, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding %s: %w", what, err)
	}
	return nil
}

// acknowledged decodes {"acknowledged":bool}, the answer of Elasticsearch's write APIs, and
// fails when the body is not that or the write was not acknowledged.
func acknowledged(what string, body []byte) error {
	var ack struct {
		Acknowledged *bool `json:"acknowledged"`
	}
	if err := decode(what, body, &ack); err != nil {
		return err
	}
	if ack.Acknowledged == nil {
		return fmt.Errorf("decoding %s: no \"acknowledged\" field", what)
	}
	if !*ack.Acknowledged {
		return fmt.Errorf("%s: not acknowledged by the cluster in time", what)
	}
	return nil
}

// parseStatusError builds a StatusError from an error body: {"error":{"type","reason"},
// "status"} or {"error":"text","status"} (Elasticsearch's form for some REST-layer errors)
// from an answer fromElasticsearch (its X-Elastic-Product header, or a 401, which
// Elasticsearch sends without it); anything else is NotElasticsearch, unquoted.
func parseStatusError(code int, body []byte, fromElasticsearch bool) *StatusError {
	e := &StatusError{Code: code}
	if !fromElasticsearch {
		e.NotElasticsearch = true
		return e
	}
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &obj) == nil && len(obj.Error) > 0 {
		var detail struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		}
		var text string
		switch {
		case json.Unmarshal(obj.Error, &detail) == nil && (detail.Type != "" || detail.Reason != ""):
			e.Type, e.Reason = detail.Type, detail.Reason
			return e
		case json.Unmarshal(obj.Error, &text) == nil:
			e.Reason = text
			return e
		}
	}
	e.NotElasticsearch = true
	return e
}

// checkName refuses a repository, snapshot or index name that cannot be put in a URL path
// segment as is: esapi writes names into the path unescaped. Elasticsearch forbids these
// characters in such names anyway (Elasticsearch 7.17 reference, Create snapshot API and
// Create index API: no \ / * ? " < > | , # or whitespace).
func checkName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%s name is empty", kind)
	}
	if strings.HasPrefix(name, "_") {
		return fmt.Errorf("%s name %q: a leading _ is reserved by Elasticsearch", kind, name)
	}
	if i := strings.IndexFunc(name, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune(`\/*?"<>|,#%`, r)
	}); i >= 0 {
		return fmt.Errorf("%s name %q: character %q is not allowed", kind, name, name[i])
	}
	return nil
}

// checkNames applies checkName to each name and requires at least one.
func checkNames(kind string, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no %s names", kind)
	}
	for _, n := range names {
		if err := checkName(kind, n); err != nil {
			return err
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
