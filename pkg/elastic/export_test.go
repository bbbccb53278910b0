package elastic

import "time"

// SetTimeout replaces DefaultTimeout for c, so a test can see it applied without waiting 5s.
func SetTimeout(c Client, d time.Duration) { c.(*client).timeout = d }

// SetCrawlerPageSize replaces the page size of CrawlersProgress until the test ends.
func SetCrawlerPageSize(t interface{ Cleanup(func()) }, n int) {
	was := crawlerPageSize
	crawlerPageSize = n
	t.Cleanup(func() { crawlerPageSize = was })
}
