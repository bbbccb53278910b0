package monocleconfig

import (
	"crypto/sha256"
	"sync"
)

// parseCacheSize is how many documents' results Parse keeps: more than the configs a
// controller's workers parse at once, few enough that the cache holds at most this many
// MaxSize documents' results.
const parseCacheSize = 32

// resultCache keeps Parse's results by document digest, evicting the oldest entry.
type resultCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]result
	order   [][sha256.Size]byte
}

type result struct {
	config *Config
	err    error
}

var parseCache = &resultCache{entries: map[[sha256.Size]byte]result{}}

// get returns f(data), computed once per document while it stays among the last
// parseCacheSize documents.
func (c *resultCache) get(data string, f func(string) (*Config, error)) (*Config, error) {
	key := sha256.Sum256([]byte(data))
	c.mu.Lock()
	r, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return r.config, r.err
	}
	cfg, err := f(data)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		if len(c.order) == parseCacheSize {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
		c.entries[key] = result{cfg, err}
		c.order = append(c.order, key)
	}
	return cfg, err
}
