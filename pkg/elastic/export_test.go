package elastic

import (
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// SetTimeout replaces DefaultTimeout for c, so a test can see it applied without waiting 5s.
func SetTimeout(c Client, d time.Duration) { c.(*client).timeout = d }

// SetCrawlerPageSize replaces the page size of CrawlersProgress until the test ends.
func SetCrawlerPageSize(t interface{ Cleanup(func()) }, n int) {
	was := crawlerPageSize
	crawlerPageSize = n
	t.Cleanup(func() { crawlerPageSize = was })
}

// NewTransportControlled is NewTransport calling next with each address the address check
// let through, before connecting to it: next returning an error stops the connection, so a
// test sees what would be dialed without sending anything.
func NewTransportControlled(next func(network, address string, c syscall.RawConn) error) *http.Transport {
	return newTransport(next)
}

// CheckProxied is the proxy choice of NewTransport with proxy and lookup in place of the
// environment's and the system resolver.
func CheckProxied(proxy func(*http.Request) (*url.URL, error), lookup LookupFunc) func(*http.Request) (*url.URL, error) {
	return checkProxied(proxy, lookup)
}
