package elastic_test

import (
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

func TestParseWatermark(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    elastic.Watermark
		wantErr bool
	}{
		"percentage":          {in: "85%", want: elastic.Watermark{Raw: "85%", UsedPercent: 85}},
		"fractional percent":  {in: "92.5%", want: elastic.Watermark{Raw: "92.5%", UsedPercent: 92.5}},
		"ratio":               {in: "0.85", want: elastic.Watermark{Raw: "0.85", UsedPercent: 85}},
		"ratio one":           {in: "1", want: elastic.Watermark{Raw: "1", UsedPercent: 100}},
		"zero":                {in: "0", want: elastic.Watermark{Raw: "0", UsedPercent: 0}},
		"megabytes":           {in: "500mb", want: elastic.Watermark{Raw: "500mb", IsBytes: true, FreeBytes: 500 << 20}},
		"upper case unit":     {in: "1GB", want: elastic.Watermark{Raw: "1GB", IsBytes: true, FreeBytes: 1 << 30}},
		"short unit":          {in: "10g", want: elastic.Watermark{Raw: "10g", IsBytes: true, FreeBytes: 10 << 30}},
		"bytes":               {in: "1024b", want: elastic.Watermark{Raw: "1024b", IsBytes: true, FreeBytes: 1024}},
		"kilobytes":           {in: "2kb", want: elastic.Watermark{Raw: "2kb", IsBytes: true, FreeBytes: 2048}},
		"terabytes":           {in: "1tb", want: elastic.Watermark{Raw: "1tb", IsBytes: true, FreeBytes: 1 << 40}},
		"fractional bytes":    {in: "1.5gb", want: elastic.Watermark{Raw: "1.5gb", IsBytes: true, FreeBytes: 3 << 29}},
		"number without unit": {in: "85", wantErr: true},
		"percent over 100":    {in: "150%", wantErr: true},
		"negative percent":    {in: "-5%", wantErr: true},
		"negative ratio":      {in: "-0.5", wantErr: true},
		"negative bytes":      {in: "-1gb", wantErr: true},
		"minus one":           {in: "-1", wantErr: true},
		"unknown unit":        {in: "5zb", wantErr: true},
		"unit alone":          {in: "gb", wantErr: true},
		"words":               {in: "lots", wantErr: true},
		"empty":               {in: "", wantErr: true},
		"percent sign alone":  {in: "%", wantErr: true},
		"NaN":                 {in: "NaN", wantErr: true},
		"too large":           {in: "9999999pb", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := elastic.ParseWatermark(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParseWatermark(%q) = %+v, want an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseWatermark(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("ParseWatermark(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestWatermarkExceeded(t *testing.T) {
	const gib = 1 << 30
	disk := func(usedGiB, totalGiB int64) elastic.Disk {
		return elastic.Disk{UsedBytes: usedGiB * gib, AvailableBytes: (totalGiB - usedGiB) * gib, TotalBytes: totalGiB * gib}
	}
	must := func(s string) elastic.Watermark {
		w, err := elastic.ParseWatermark(s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	tests := map[string]struct {
		mark string
		disk elastic.Disk
		want bool
	}{
		"under a percentage":                  {"85%", disk(80, 100), false},
		"at a percentage is not over":         {"85%", disk(85, 100), false},
		"over a percentage":                   {"85%", disk(86, 100), true},
		"over a ratio":                        {"0.85", disk(90, 100), true},
		"under a ratio":                       {"0.95", disk(90, 100), false},
		"enough free bytes":                   {"5gb", disk(90, 100), false},
		"at the free bytes is not over":       {"10gb", disk(90, 100), false},
		"too few free bytes":                  {"11gb", disk(90, 100), true},
		"no total is never over a percentage": {"1%", elastic.Disk{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := must(tc.mark).Exceeded(tc.disk); got != tc.want {
				t.Errorf("%s.Exceeded(%+v) = %v, want %v", tc.mark, tc.disk, got, tc.want)
			}
		})
	}
}

// TestWatermarksAnyExceeded: the blocks are worth reading as soon as one watermark is past,
// a byte flood stage included on a disk far from 85% used.
func TestWatermarksAnyExceeded(t *testing.T) {
	const gib = 1 << 30
	half := elastic.Disk{UsedBytes: 50 * gib, AvailableBytes: 50 * gib, TotalBytes: 100 * gib}
	marks := func(low, high, flood string) elastic.Watermarks {
		var w elastic.Watermarks
		for _, f := range []struct {
			dst *elastic.Watermark
			raw string
		}{{&w.Low, low}, {&w.High, high}, {&w.FloodStage, flood}} {
			var err error
			if *f.dst, err = elastic.ParseWatermark(f.raw); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	tests := map[string]struct {
		w    elastic.Watermarks
		want bool
	}{
		"defaults, half used":              {marks("85%", "90%", "95%"), false},
		"low at 40%":                       {marks("40%", "90%", "95%"), true},
		"high as a ratio of 0.45":          {marks("0.5", "0.45", "0.95"), true},
		"flood stage of 60gb free":         {marks("80gb", "70gb", "60gb"), true},
		"byte watermarks with room left":   {marks("30gb", "20gb", "10gb"), false},
		"exactly at the low is not past":   {marks("50%", "90%", "95%"), false},
		"exactly at the free is not past":  {marks("50gb", "40gb", "30gb"), false},
		"one byte short of the flood free": {marks("60gb", "55gb", "53687091201b"), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.w.AnyExceeded(half); got != tc.want {
				t.Errorf("AnyExceeded(half used) = %v, want %v", got, tc.want)
			}
		})
	}
}
