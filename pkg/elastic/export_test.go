package elastic

import "time"

// SetTimeout replaces DefaultTimeout for c, so a test can see it applied without waiting 5s.
func SetTimeout(c Client, d time.Duration) { c.(*client).timeout = d }
