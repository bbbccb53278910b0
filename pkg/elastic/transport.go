package elastic

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// NewTransport returns the transport New uses by default: connection, TLS handshake and
// response-header timeouts of its own, so a call made with a long deadline still cannot
// hang on a dead peer, and few idle connections, since the operator talks to each
// Elasticsearch rarely. An https:// cluster's certificate is verified against the system's
// roots.
//
// It connects to no refused address (CheckAddress): the check runs on each address the
// dialer is about to connect to, after name resolution and before any packet is sent, so a
// name resolving to 127.0.0.1 is refused like the literal, and an error then matches
// ErrAddressRefused (errors.Is). A proxy of the environment (HTTPS_PROXY, HTTP_PROXY,
// NO_PROXY; http.ProxyFromEnvironment) is dialed with the same check, and the host of a
// request sent through it is checked by CheckHost first, since the proxy, not this
// transport, connects to it.
func NewTransport() *http.Transport {
	return newTransport(nil)
}

// controlFunc is the signature of net.Dialer's Control hook: network and address
// ("ip:port") of the connection about to be made on c.
type controlFunc func(network, address string, c syscall.RawConn) error

// newTransport is NewTransport with next, when not nil, called after the address check
// passed and before the connection is made (a test's way to see what would be dialed).
func newTransport(next controlFunc) *http.Transport {
	return &http.Transport{
		Proxy: checkProxied(http.ProxyFromEnvironment, net.DefaultResolver.LookupNetIP),
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
			Control:   guard(next),
		}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}
}

// NewTransportVia is NewTransport sending every connection to dialAddress (host:port)
// instead of the host of the request, without a proxy: the operator's
// --operand-dial-address, a port-forward or a test's fake Elasticsearch. dialAddress is the
// operator administrator's and is not checked; the host of each request still is
// (CheckHost), before the connection, so that a cluster URL naming a refused address is
// refused whether or not the flag is set. Names are looked up in the hosts file only
// (/etc/hosts, where localhost and the machine's own names are), never in DNS: the names
// the dial address serves (Services' names, where the operator runs outside the cluster)
// resolve nowhere, and each would be a query to the DNS server for nothing.
func NewTransportVia(dialAddress string) *http.Transport {
	t := NewTransport()
	t.Proxy = nil
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	hostsOnly := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS: names are looked up in the hosts file only")
	}}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if err := CheckHost(ctx, hostsOnly.LookupNetIP, host); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return dialer.DialContext(ctx, network, dialAddress)
	}
	return t
}

// NewTransportWithCA is NewTransport verifying an https:// cluster's certificate against
// the certificates of caPEM (e.g. ECK's <name>-es-http-certs-public ca.crt), or against the
// system's roots when caPEM is empty.
func NewTransportWithCA(caPEM []byte) (*http.Transport, error) {
	return TrustCA(NewTransport(), caPEM)
}

// TrustCA returns a copy of t that verifies servers' certificates against the PEM
// certificates of caPEM only (TLS 1.2 at least), or t itself when caPEM is empty. The error
// reports a caPEM that holds no certificate. The copy dials as t does (the address check
// included).
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

// ErrAddressRefused matches, with errors.Is, the error of a call that was not sent because
// the cluster's host is, or resolves to, an address the operator does not connect to
// (CheckAddress). Nothing reached that address: the check runs before the connection.
var ErrAddressRefused = errors.New("address refused")

// AddressRefusedError is the error of CheckAddress and CheckHost: Addr is of class Class.
type AddressRefusedError struct {
	// Host is the name that resolved to Addr; empty when the check saw the address only (as
	// the dialer does, after resolution) or the host was Addr itself.
	Host string
	// Addr is the refused address, e.g. 127.0.0.1 or fe80::1.
	Addr netip.Addr
	// Class says what Addr is: "loopback", "link-local", "link-local multicast" or
	// "unspecified".
	Class string
}

// Error says which address was refused and why, e.g. "address 169.254.169.254 is
// link-local: the operator does not connect to loopback, link-local or unspecified
// addresses".
func (e *AddressRefusedError) Error() string {
	what := "address " + e.Addr.String()
	if e.Host != "" {
		what = fmt.Sprintf("host %s resolves to %s, which", e.Host, e.Addr)
	}
	return fmt.Sprintf("%s is %s: the operator does not connect to loopback, link-local or unspecified addresses", what, e.Class)
}

// Is makes errors.Is(err, ErrAddressRefused) hold.
func (e *AddressRefusedError) Is(target error) bool { return target == ErrAddressRefused }

// thisNetwork is 0.0.0.0/8, "this network" (RFC 1122, section 3.2.1.3): a source address
// only, never a destination; Linux connects 0.0.0.0 to the local host.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// CheckAddress returns an *AddressRefusedError when ip is an address the operator does not
// connect to for a cluster a Monocle names, nil otherwise. Refused, the IPv4 forms of
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) included: loopback (127.0.0.0/8, ::1), which
// is the operator's own pod; link-local unicast (169.254.0.0/16, where clouds serve
// instance metadata and credentials at 169.254.169.254, and fe80::/10); link-local
// multicast (224.0.0.0/24, ff02::/16); unspecified (0.0.0.0/8, ::). Private ranges
// (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7) are allowed: Services and
// on-premises clusters live there. The classes are those of package net/netip.
func CheckAddress(ip netip.Addr) error {
	a := ip.Unmap()
	class := ""
	switch {
	case a.IsLoopback():
		class = "loopback"
	case a.IsLinkLocalUnicast():
		class = "link-local"
	case a.IsLinkLocalMulticast():
		class = "link-local multicast"
	case a.IsUnspecified() || (a.Is4() && thisNetwork.Contains(a)):
		class = "unspecified"
	case !a.IsValid():
		class = "invalid"
	default:
		return nil
	}
	return &AddressRefusedError{Addr: ip.WithZone(""), Class: class}
}

// LookupFunc resolves a host name to its addresses, as net.Resolver.LookupNetIP with
// network "ip" does.
type LookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// CheckHost checks a host as the connection to it would be checked, without connecting:
// an IP address with CheckAddress, a name by resolving it with lookup, refused when each
// address it resolves to is refused (a dialer tries them in turn and would connect to none).
// A name that does not resolve is not refused: the connection that follows (to an
// administrator's dial address or proxy) decides where it goes.
func CheckHost(ctx context.Context, lookup LookupFunc, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return CheckAddress(ip)
	}
	addrs, err := lookup(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	var first error
	for _, a := range addrs {
		// The resolver gives IPv4 addresses in their IPv4-mapped form.
		err := CheckAddress(a.Unmap())
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
			first.(*AddressRefusedError).Host = host
		}
	}
	return first
}

// guard is the dialer's Control hook: it refuses an address CheckAddress refuses, then calls
// next when set. The dialer calls it with the resolved address of each attempt, after the
// socket is created and before it connects.
func guard(next controlFunc) controlFunc {
	return func(network, address string, c syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("address %q: %w", address, err)
		}
		if err := CheckAddress(ap.Addr()); err != nil {
			return err
		}
		if next != nil {
			return next(network, address, c)
		}
		return nil
	}
}

// checkProxied wraps proxy, the choice of a proxy for a request: a request that goes
// through one is refused, before anything is sent, when its host is refused (CheckHost).
func checkProxied(proxy func(*http.Request) (*url.URL, error), lookup LookupFunc) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		u, err := proxy(req)
		if err != nil || u == nil {
			return u, err
		}
		if err := CheckHost(req.Context(), lookup, req.URL.Hostname()); err != nil {
			return nil, err
		}
		return u, nil
	}
}
