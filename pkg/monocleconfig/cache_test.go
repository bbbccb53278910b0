package monocleconfig

import (
	"fmt"
	"testing"
)

func TestResultCache(t *testing.T) {
	c := &resultCache{entries: map[[32]byte]result{}}
	calls := 0
	f := func(s string) (*Config, error) {
		calls++
		return &Config{OIDCClientSecretVariable: s}, fmt.Errorf("error of %s", s)
	}
	for range 3 {
		cfg, err := c.get("a", f)
		if cfg.OIDCClientSecretVariable != "a" || err.Error() != "error of a" {
			t.Fatalf("get(a) = %v, %v", cfg, err)
		}
	}
	if calls != 1 {
		t.Fatalf("f ran %d times for one document, want 1", calls)
	}
	for i := range parseCacheSize {
		c.get(fmt.Sprint(i), f)
	}
	if len(c.entries) != parseCacheSize || len(c.order) != parseCacheSize {
		t.Fatalf("cache holds %d entries (%d in order), want %d", len(c.entries), len(c.order), parseCacheSize)
	}
	calls = 0
	c.get("a", f) // evicted by the parseCacheSize newer documents
	c.get(fmt.Sprint(parseCacheSize-1), f)
	if calls != 1 {
		t.Fatalf("f ran %d times, want once (for the evicted document only)", calls)
	}
}
