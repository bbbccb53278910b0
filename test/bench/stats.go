package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// median returns the median of xs (the mean of the two middle values for an even count), or
// NaN when xs is empty.
func median(xs []float64) float64 {
	return quantile(xs, 0.5)
}

// quantile returns the q-quantile of xs by linear interpolation between closest ranks, or NaN
// when xs is empty.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// p99 is the nearest-rank 99th percentile: with fewer than 100 samples it is the maximum, so a
// target on it is judged on the worst sample.
func p99(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(0.99*float64(len(s)))) - 1
	return s[max(rank, 0)]
}

func minMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// seconds formats a duration in seconds: milliseconds below one second.
func seconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "–"
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s < 100:
		return fmt.Sprintf("%.2f s", s)
	default:
		return fmt.Sprintf("%.0f s", s)
	}
}

// mib formats bytes in MiB.
func mib(b float64) string {
	if math.IsNaN(b) {
		return "–"
	}
	return fmt.Sprintf("%.1f MiB", b/(1<<20))
}

// signedMiB formats a difference of bytes in MiB with its sign.
func signedMiB(b float64) string {
	if b >= 0 {
		return "+" + mib(b)
	}
	return mib(b)
}

// count formats a number of API calls.
func count(n float64) string {
	if math.IsNaN(n) {
		return "–"
	}
	if n == math.Trunc(n) {
		return strconv.Itoa(int(n))
	}
	return fmt.Sprintf("%.1f", n)
}

// spread describes the range of xs with format: "min–max" (one value when they are equal).
func spread(xs []float64, format func(float64) string) string {
	if len(xs) < 2 {
		return "(1 run)"
	}
	lo, hi := minMax(xs)
	if lo == hi {
		return "all " + format(lo)
	}
	return format(lo) + " – " + format(hi)
}

func since(t0 time.Time, t time.Time) float64 { return t.Sub(t0).Seconds() }

// bucket is one cumulative histogram bucket.
type bucket struct {
	le    float64
	count float64
}

// histogram returns the cumulative buckets of histogram name (without "_bucket") whose labels
// contain want, sorted by upper bound, minus those of before (a delta between two scrapes).
func histogram(after, before testkit.Metrics, name string, want ...string) []bucket {
	byLE := map[float64]float64{}
	add := func(m testkit.Metrics, sign float64) {
		for series, v := range m {
			n, labels, _ := strings.Cut(series, "{")
			if n != name+"_bucket" {
				continue
			}
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(labels, w)
			}
			if !ok {
				continue
			}
			_, rest, found := strings.Cut(labels, `le="`)
			if !found {
				continue
			}
			leText, _, _ := strings.Cut(rest, `"`)
			le, err := strconv.ParseFloat(leText, 64)
			if err != nil {
				continue
			}
			byLE[le] += sign * v
		}
	}
	add(after, 1)
	if before != nil {
		add(before, -1)
	}
	out := make([]bucket, 0, len(byLE))
	for le, c := range byLE {
		out = append(out, bucket{le, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].le < out[j].le })
	return out
}

// quantileBucket returns the bounds (lo, hi] of the bucket that holds the q-quantile of
// cumulative buckets; hi is +Inf when it lies beyond the last finite bound. ok is false
// without observations. The workqueue's buckets are decades (…, 0.1, 1, 10 s), so a bucket is
// all one can honestly say about its p99.
func quantileBucket(q float64, buckets []bucket) (lo, hi float64, ok bool) {
	if len(buckets) == 0 || buckets[len(buckets)-1].count <= 0 {
		return 0, 0, false
	}
	rank := q * buckets[len(buckets)-1].count
	prev := 0.0
	for _, b := range buckets {
		if b.count >= rank {
			return prev, b.le, true
		}
		prev = b.le
	}
	return prev, math.Inf(1), true
}

// bucketText formats quantileBucket's result: "100 ms – 1 s", "> 10 s".
func bucketText(lo, hi float64, ok bool) string {
	switch {
	case !ok:
		return "–"
	case math.IsInf(hi, 1):
		return "> " + bound(lo)
	case lo == 0:
		return "≤ " + bound(hi)
	default:
		return bound(lo) + " – " + bound(hi)
	}
}

// bound formats a bucket bound: "10 ms", "1 s".
func bound(s float64) string {
	if s < 1 {
		return strconv.FormatFloat(s*1000, 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'g', 3, 64) + " s"
}

// mergeBuckets adds cumulative histograms with the same bounds.
func mergeBuckets(hs ...[]bucket) []bucket {
	byLE := map[float64]float64{}
	for _, h := range hs {
		for _, b := range h {
			byLE[b.le] += b.count
		}
	}
	out := make([]bucket, 0, len(byLE))
	for le, c := range byLE {
		out = append(out, bucket{le, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].le < out[j].le })
	return out
}

// fractionBelow returns the share of observations in buckets with upper bound ≤ le.
func fractionBelow(le float64, buckets []bucket) float64 {
	if len(buckets) == 0 || buckets[len(buckets)-1].count <= 0 {
		return math.NaN()
	}
	var below float64
	for _, b := range buckets {
		if b.le <= le {
			below = b.count
		}
	}
	return below / buckets[len(buckets)-1].count
}
