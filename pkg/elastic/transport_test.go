package elastic_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

func TestCheckAddress(t *testing.T) {
	refused := map[string]string{
		"127.0.0.1":              "loopback",
		"127.3.4.5":              "loopback",
		"::1":                    "loopback",
		"::ffff:127.0.0.1":       "loopback",
		"169.254.169.254":        "link-local",
		"::ffff:169.254.169.254": "link-local",
		"fe80::1":                "link-local",
		"fe80::1%eth0":           "link-local",
		"224.0.0.251":            "link-local multicast",
		"ff02::1":                "link-local multicast",
		"0.0.0.0":                "unspecified",
		"0.1.2.3":                "unspecified",
		"::":                     "unspecified",
	}
	for s, class := range refused {
		err := elastic.CheckAddress(netip.MustParseAddr(s))
		var re *elastic.AddressRefusedError
		if !errors.As(err, &re) || re.Class != class || !errors.Is(err, elastic.ErrAddressRefused) {
			t.Errorf("CheckAddress(%s) = %v, want a refusal as %s", s, err, class)
		}
	}
	for _, s := range []string{"10.0.0.1", "10.96.0.10", "172.16.5.4", "192.168.1.20", "100.64.0.1", "fd00::1", "2001:db8::1", "8.8.8.8", "::ffff:10.1.2.3"} {
		if err := elastic.CheckAddress(netip.MustParseAddr(s)); err != nil {
			t.Errorf("CheckAddress(%s) = %v, want it allowed", s, err)
		}
	}
}

// countingListener is a TCP listener on 127.0.0.1 that counts the connections it accepts
// and closes them.
func countingListener(t *testing.T) (port string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, accepted
}

func TestTransportRefusesLoopback(t *testing.T) {
	// A real listener on 127.0.0.1, reached by its address, by a name that resolves to it
	// (localhost, from the hosts file) and by its IPv4-mapped IPv6 form: each is refused
	// before a connection is made.
	port, accepted := countingListener(t)
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]"} {
		c, err := elastic.New("http://"+host+":"+port, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Health(context.Background())
		if !errors.Is(err, elastic.ErrAddressRefused) {
			t.Errorf("Health of %s: %v, want ErrAddressRefused", host, err)
		} else if !strings.Contains(err.Error(), "is loopback") {
			t.Errorf("Health of %s: %q, want the error to say the address is loopback", host, err)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections, want none", n)
	}
}

// dialRecorder is a Control hook that records the addresses the address check let through
// and stops each connection before it is made.
type dialRecorder struct {
	mu   sync.Mutex
	seen []string
}

var errStopped = errors.New("stopped by the test before connecting")

func (r *dialRecorder) control(_, address string, _ syscall.RawConn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, address)
	return errStopped
}

func TestTransportChecksBeforeConnecting(t *testing.T) {
	tests := map[string]struct {
		url     string
		refused bool
		// seen is the address the check lets through to the connection, if any.
		seen string
	}{
		"cloud metadata":    {url: "http://169.254.169.254:80", refused: true},
		"IPv6 link-local":   {url: "http://[fe80::1]:9200", refused: true},
		"unspecified":       {url: "http://0.0.0.0:9200", refused: true},
		"a Service's IP":    {url: "http://10.96.12.34:9200", seen: "10.96.12.34:9200"},
		"on-premises":       {url: "https://192.168.10.20:9200", seen: "192.168.10.20:9200"},
		"IPv6 unique-local": {url: "http://[fd12:3456::7]:9200", seen: "[fd12:3456::7]:9200"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rec := &dialRecorder{}
			c, err := elastic.New(tc.url, elastic.NewTransportControlled(rec.control))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Health(context.Background())
			if got := errors.Is(err, elastic.ErrAddressRefused); got != tc.refused {
				t.Errorf("Health: %v, want refused %v", err, tc.refused)
			}
			if !tc.refused && !errors.Is(err, errStopped) {
				t.Errorf("Health: %v, want the connection stopped by the test", err)
			}
			want := []string(nil)
			if tc.seen != "" {
				want = []string{tc.seen}
			}
			if strings.Join(rec.seen, ",") != strings.Join(want, ",") {
				t.Errorf("connections let through: %q, want %q", rec.seen, want)
			}
		})
	}
}

func TestTransportViaChecksTheRequestHost(t *testing.T) {
	// The administrator's dial address (the fake, on 127.0.0.1) is trusted; the host of the
	// request is still checked, without connecting to it: looked up in the hosts file only
	// (localhost), never in DNS.
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, healthBody("green", 1, 0, false))
	tr := elastic.NewTransportVia(strings.TrimPrefix(srv.URL, "http://"))
	t.Cleanup(tr.CloseIdleConnections)
	for host, refused := range map[string]bool{
		"monocle-elastic.ns.svc": false, // not in the hosts file: the dial address decides
		"10.96.12.34":            false,
		"localhost":              true,
		"127.0.0.1":              true,
		"169.254.169.254":        true,
		"[::1]":                  true,
	} {
		c, err := elastic.New("http://"+host+":9200", tr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Health(context.Background())
		if got := errors.Is(err, elastic.ErrAddressRefused); got != refused {
			t.Errorf("Health of %s through the dial address: %v, want refused %v", host, err, refused)
		}
		if !refused && err != nil {
			t.Errorf("Health of %s through the dial address: %v", host, err)
		}
	}
	if n := len(srv.RequestsTo("GET", "/_cluster/health")); n != 2 {
		t.Errorf("the fake got %d requests, want 2 (those of the hosts not refused)", n)
	}
}

func TestCheckHost(t *testing.T) {
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "metadata.example":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "loopback.example":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
		case "both.example":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.0.0.5")}, nil
		case "es.example":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	for host, refused := range map[string]bool{
		"metadata.example": true, "loopback.example": true, "169.254.1.1": true, "::1": true,
		"both.example": false, "es.example": false, "unknown.example": false, "10.1.1.1": false,
	} {
		err := elastic.CheckHost(context.Background(), lookup, host)
		if got := errors.Is(err, elastic.ErrAddressRefused); got != refused {
			t.Errorf("CheckHost(%s) = %v, want refused %v", host, err, refused)
		}
	}
	err := elastic.CheckHost(context.Background(), lookup, "metadata.example")
	if want := "host metadata.example resolves to 169.254.169.254, which is link-local"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("CheckHost(metadata.example) = %v, want it to start %q", err, want)
	}

	// Through a proxy, which connects to the host itself, the host is checked first.
	proxyURL := &url.URL{Scheme: "http", Host: "proxy.example:3128"}
	proxied := elastic.CheckProxied(http.ProxyURL(proxyURL), lookup)
	direct := elastic.CheckProxied(func(*http.Request) (*url.URL, error) { return nil, nil }, lookup)
	for host, refused := range map[string]bool{"metadata.example": true, "es.example": false} {
		req, _ := http.NewRequest("GET", "http://"+host+":9200/_cluster/health", nil)
		u, err := proxied(req)
		if got := errors.Is(err, elastic.ErrAddressRefused); got != refused || (!refused && u != proxyURL) {
			t.Errorf("proxy for %s = %v, %v; want refused %v", host, u, err, refused)
		}
		// Without a proxy the dialer checks the address it connects to.
		if u, err := direct(req); u != nil || err != nil {
			t.Errorf("direct for %s = %v, %v; want no proxy and no error", host, u, err)
		}
	}
}
