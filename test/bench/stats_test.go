package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

const exposition = `# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue.
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="monocle",le="0.1"} 50
workqueue_queue_duration_seconds_bucket{name="monocle",le="1"} 90
workqueue_queue_duration_seconds_bucket{name="monocle",le="10"} 100
workqueue_queue_duration_seconds_bucket{name="monocle",le="+Inf"} 100
workqueue_queue_duration_seconds_bucket{name="other",le="+Inf"} 7
monocle_operator_syncs_total{result="success"} 12
monocle_operator_syncs_total{result="error"} 3
go_memstats_heap_inuse_bytes 5.7344e+06
`

func TestHistogram(t *testing.T) {
	before := testkit.ParseMetrics(strings.ReplaceAll(exposition, "} 50\n", "} 40\n"))
	after := testkit.ParseMetrics(exposition)
	h := histogram(after, before, "workqueue_queue_duration_seconds", `name="monocle"`)
	if len(h) != 4 || h[0].le != 0.1 || h[0].count != 10 || !math.IsInf(h[3].le, 1) || h[3].count != 0 {
		t.Fatalf("delta histogram = %v, want 4 buckets, 10 in le=0.1 and nothing else new", h)
	}
	full := histogram(after, nil, "workqueue_queue_duration_seconds", `name="monocle"`)
	for name, tc := range map[string]struct {
		q      float64
		lo, hi float64
	}{
		"median in the first bucket": {0.5, 0, 0.1},
		"p90 at a bound":             {0.9, 0.1, 1},
		"p99 in the last finite":     {0.99, 1, 10},
	} {
		t.Run(name, func(t *testing.T) {
			lo, hi, ok := quantileBucket(tc.q, full)
			if !ok || lo != tc.lo || hi != tc.hi {
				t.Errorf("quantileBucket(%v) = (%v, %v, %v), want (%v, %v]", tc.q, lo, hi, ok, tc.lo, tc.hi)
			}
		})
	}
	if got := fractionBelow(1, full); got != 0.9 {
		t.Errorf("fractionBelow(1) = %v, want 0.9", got)
	}
	if got := bucketText(quantileBucket(0.99, full)); got != "1 s – 10 s" {
		t.Errorf("bucketText = %q", got)
	}
	beyond := mergeBuckets([]bucket{{1, 1}, {10, 1}, {math.Inf(1), 100}})
	if got := bucketText(quantileBucket(0.99, beyond)); got != "> 10 s" {
		t.Errorf("bucketText beyond the last bound = %q, want \"> 10 s\"", got)
	}
	if _, _, ok := quantileBucket(0.99, nil); ok {
		t.Error("quantileBucket of no observations reported a bucket")
	}
}

func TestPercentiles(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if got := median(xs); got != 3 {
		t.Errorf("median = %v, want 3", got)
	}
	if got := median([]float64{1, 2, 3, 4}); got != 2.5 {
		t.Errorf("median of an even count = %v, want 2.5", got)
	}
	if got := p99(xs); got != 5 {
		t.Errorf("p99 of 5 samples = %v, want the maximum", got)
	}
	var hundred []float64
	for i := 1; i <= 200; i++ {
		hundred = append(hundred, float64(i))
	}
	if got := p99(hundred); got != 198 {
		t.Errorf("p99 of 1..200 = %v, want 198 (nearest rank)", got)
	}
	if !math.IsNaN(median(nil)) || !math.IsNaN(p99(nil)) {
		t.Error("statistics of no samples are not NaN")
	}
	if got := verdict(1.5, 1); got != "**no**" {
		t.Errorf("verdict(1.5, 1) = %q", got)
	}
}

func TestParseSweep(t *testing.T) {
	b := &bench{cfg: config{qps: 70, burst: 140, workers: 3}}
	for name, tc := range map[string]struct {
		in      string
		want    []setting
		wantErr bool
	}{
		"default and main": {in: "default,main", want: []setting{{}, {70, 140, 3}}},
		"qps and workers":  {in: "200/400, 100/200/4", want: []setting{{200, 400, 0}, {100, 200, 4}}},
		"missing burst":    {in: "200", wantErr: true},
		"zero workers":     {in: "200/400/0", wantErr: true},
		"not a number":     {in: "x/400", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := b.parseSweep(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && !equalSettings(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func equalSettings(a, b []setting) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFlagDefault(t *testing.T) {
	usage := "Usage:\n  -kube-api-burst int\n    \tBurst of queries. (default 100)\n  -kube-api-qps float\n    \tQueries per second. (default 50)\n  -workers int\n    \tNumber of Monocles synced at once. (default 2)\n"
	for flagName, want := range map[string]string{"kube-api-qps": "50", "kube-api-burst": "100", "workers": "2", "absent": "?"} {
		if got := flagDefault(usage, flagName); got != want {
			t.Errorf("flagDefault(%s) = %q, want %q", flagName, got, want)
		}
	}
}

func TestAuditLog(t *testing.T) {
	lines := []string{
		// The operator's create, kept.
		`{"stage":"ResponseComplete","verb":"create","userAgent":"monocle-operator","stageTimestamp":"2026-01-01T00:00:01.000000Z","objectRef":{"resource":"secrets","namespace":"a","name":"m-api"},"responseStatus":{"code":201}}`,
		// Its status write, kept.
		`{"stage":"ResponseComplete","verb":"update","userAgent":"monocle-operator","stageTimestamp":"2026-01-01T00:00:02.000000Z","objectRef":{"resource":"monocles","subresource":"status","namespace":"a","name":"m"},"responseStatus":{"code":200}}`,
		// A read, dropped.
		`{"stage":"ResponseComplete","verb":"list","userAgent":"monocle-operator","stageTimestamp":"2026-01-01T00:00:03.000000Z","objectRef":{"resource":"secrets"},"responseStatus":{"code":200}}`,
		// Another component's write, dropped.
		`{"stage":"ResponseComplete","verb":"create","userAgent":"kube-controller-manager/v1.36.3","stageTimestamp":"2026-01-01T00:00:04.000000Z","objectRef":{"resource":"pods","namespace":"a"},"responseStatus":{"code":201}}`,
		// The operator's lease renewal, kept by the reader, excluded from operatorWritesAfter.
		`{"stage":"ResponseComplete","verb":"update","userAgent":"monocle-operator","stageTimestamp":"2026-01-01T00:00:05.000000Z","objectRef":{"resource":"leases","namespace":"l"},"responseStatus":{"code":200}}`,
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	// The last line is written in two parts, as the API server may flush it.
	whole := strings.Join(lines, "\n") + "\n"
	cut := len(whole) - 40
	if err := os.WriteFile(path, []byte(whole[:cut]), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{audit: newAuditLog(path)}
	defer e.audit.Close()
	if err := e.audit.Refresh(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(whole[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writes, err := e.operatorWritesAfter(parseTime(t, "2026-01-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if got := writeSummary(writes); got != "1 create secrets, 1 update monocles/status" {
		t.Errorf("operator writes = %q", got)
	}
	if len(writes) != 2 || !ownedCreate(writes[0]) || ownedCreate(writes[1]) || !statusWrite(writes[1]) {
		t.Errorf("classification wrong: %v", writes)
	}
	later, err := e.operatorWritesAfter(parseTime(t, "2026-01-01T00:00:01.5Z"), "a")
	if err != nil || len(later) != 1 {
		t.Errorf("writes after 1.5 s in namespace a = %v, %v; want the status write", later, err)
	}
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
