package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/elastic/go-elasticsearch/v7/esapi"
)

// The cluster settings holding the disk watermarks (Elasticsearch 7.17 reference, Cluster-
// level shard allocation and routing settings, Disk-based shard allocation settings).
const (
	settingWatermarkLow   = "cluster.routing.allocation.disk.watermark.low"
	settingWatermarkHigh  = "cluster.routing.allocation.disk.watermark.high"
	settingWatermarkFlood = "cluster.routing.allocation.disk.watermark.flood_stage"
)

// Watermarks are the disk watermarks in force. Past Low, Elasticsearch allocates no more
// shards to the node; past High, it moves shards away; past FloodStage, it makes every index
// with a shard on the node read-only (index.blocks.read_only_allow_delete). The 7.17 defaults
// are 85%, 90% and 95%.
type Watermarks struct {
	Low, High, FloodStage Watermark
}

// Watermark is one disk watermark: either a share of the disk used (a percentage such as
// "85%" or a ratio such as "0.85") or an amount of disk that must stay free (a byte value
// such as "500mb"). Elasticsearch 7.17 reference, Disk-based shard allocation settings.
type Watermark struct {
	// Raw is the value as Elasticsearch reports it, e.g. "85%".
	Raw string
	// IsBytes tells which of UsedPercent and FreeBytes applies.
	IsBytes bool
	// UsedPercent, in [0, 100], is the share of the disk used past which the watermark is
	// exceeded, when IsBytes is false.
	UsedPercent float64
	// FreeBytes is the free space below which the watermark is exceeded, when IsBytes is
	// true.
	FreeBytes int64
}

// Exceeded reports whether d is past the watermark: more of the disk used than UsedPercent,
// or less free than FreeBytes, as Elasticsearch's disk threshold decider compares them
// (strictly). A Disk without a total is never past a percentage.
func (w Watermark) Exceeded(d Disk) bool {
	if w.IsBytes {
		return d.AvailableBytes < w.FreeBytes
	}
	return d.TotalBytes > 0 && d.PercentUsed() > w.UsedPercent
}

// AnyExceeded reports whether d is past any of the three watermarks, each read as Exceeded
// reads it: a byte watermark is a minimum of free space, which an admin can set to block
// indices on a disk far from 85% used.
func (w Watermarks) AnyExceeded(d Disk) bool {
	return w.Low.Exceeded(d) || w.High.Exceeded(d) || w.FloodStage.Exceeded(d)
}

// String returns Raw.
func (w Watermark) String() string { return w.Raw }

// ParseWatermark parses a watermark the way Elasticsearch 7.17 does (RatioValue, then
// ByteSizeValue): "85%" and "85.5%" are percentages in [0, 100]; a bare number such as "0.85"
// is a ratio in [0, 1]; anything else must be a byte size with a unit, b, k/kb, m/mb, g/gb,
// t/tb or p/pb in powers of 1024, case-insensitive, e.g. "500mb" or "1.5gb". "85" (no unit,
// out of ratio range) and "-1" are errors.
func ParseWatermark(s string) (Watermark, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return Watermark{}, fmt.Errorf("watermark is empty")
	}
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
			return Watermark{}, fmt.Errorf("watermark %q: want a percentage in [0, 100]", s)
		}
		return Watermark{Raw: s, UsedPercent: f}, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) || f < 0 || f > 1 {
			return Watermark{}, fmt.Errorf("watermark %q: a bare number is a ratio in [0, 1]; a byte value needs a unit", s)
		}
		return Watermark{Raw: s, UsedPercent: 100 * f}, nil
	}
	n, err := parseByteSize(v)
	if err != nil {
		return Watermark{}, fmt.Errorf("watermark %q: %w", s, err)
	}
	return Watermark{Raw: s, IsBytes: true, FreeBytes: n}, nil
}

// byteUnits are Elasticsearch's byte size suffixes (ByteSizeValue), longest first so "kb" is
// tried before "b".
var byteUnits = []struct {
	suffix string
	bytes  float64
}{
	{"pb", 1 << 50}, {"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10},
	{"p", 1 << 50}, {"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10},
	{"b", 1},
}

// parseByteSize parses a non-negative byte size with a unit, e.g. "500mb"; a fraction is
// allowed and truncated to whole bytes, as Elasticsearch does.
func parseByteSize(s string) (int64, error) {
	lower := strings.ToLower(s)
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(lower, u.suffix)
		if !ok {
			continue
		}
		num = strings.TrimSpace(num)
		if n, err := strconv.ParseInt(num, 10, 64); err == nil && n >= 0 {
			if float64(n)*u.bytes > math.MaxInt64 {
				return 0, fmt.Errorf("byte size out of range")
			}
			return n * int64(u.bytes), nil
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, fmt.Errorf("want a percentage, a ratio or a byte size such as 500mb")
		}
		b := f * u.bytes
		if b >= math.MaxInt64 {
			return 0, fmt.Errorf("byte size out of range")
		}
		return int64(b), nil
	}
	return 0, fmt.Errorf("want a percentage, a ratio or a byte size such as 500mb")
}

// Watermarks returns the disk watermarks in force, from GET
// _cluster/settings?include_defaults=true&flat_settings=true. A transient setting wins over
// a persistent one, which wins over the default (which reflects elasticsearch.yml). A
// watermark missing from all three, or one that does not parse, is a decoding error.
func (c *client) Watermarks(ctx context.Context) (Watermarks, error) {
	const what = "_cluster/settings"
	var settings struct {
		Persistent map[string]json.RawMessage `json:"persistent"`
		Transient  map[string]json.RawMessage `json:"transient"`
		Defaults   map[string]json.RawMessage `json:"defaults"`
	}
	req := esapi.ClusterGetSettingsRequest{IncludeDefaults: ptr(true), FlatSettings: ptr(true)}
	if err := c.callJSON(ctx, "GET _cluster/settings", what, req, &settings); err != nil {
		return Watermarks{}, err
	}
	var w Watermarks
	for _, f := range []struct {
		dst *Watermark
		key string
	}{
		{&w.Low, settingWatermarkLow},
		{&w.High, settingWatermarkHigh},
		{&w.FloodStage, settingWatermarkFlood},
	} {
		var raw json.RawMessage
		for _, section := range []map[string]json.RawMessage{settings.Transient, settings.Persistent, settings.Defaults} {
			if v, ok := section[f.key]; ok {
				raw = v
				break
			}
		}
		if raw == nil {
			return Watermarks{}, fmt.Errorf("decoding %s: no %s", what, f.key)
		}
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return Watermarks{}, fmt.Errorf("decoding %s: %s is %s, not a string", what, f.key, raw)
		}
		wm, err := ParseWatermark(text)
		if err != nil {
			return Watermarks{}, fmt.Errorf("decoding %s: %s: %w", what, f.key, err)
		}
		*f.dst = wm
	}
	return w, nil
}
