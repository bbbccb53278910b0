package testkit

import (
	"strconv"
	"strings"
)

// Metrics is one scrape of a Prometheus text exposition: each sample's value by its series,
// the series written as in the exposition, `name` or `name{label="value",...}`.
type Metrics map[string]float64

// ParseMetrics reads a Prometheus text exposition (format 0.0.4, as client_golang writes
// it). A sample line's value is its last space-separated field; comments (# HELP, # TYPE),
// empty lines and lines whose last field is not a number are skipped. Samples with a
// timestamp after the value, which client_golang does not write, are not supported.
func ParseMetrics(text string) Metrics {
	m := Metrics{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m
}

// Family sums the samples of metric name whose labels contain every one of labels, and
// counts them. name must match whole: "foo" matches neither "foo_total" nor "foo_bucket".
// Each of labels is a substring of the text between the braces, such as `code="200"` or
// `code="5` (every 5xx code).
func (m Metrics) Family(name string, labels ...string) (sum float64, series int) {
	for key, v := range m {
		n, set, _ := strings.Cut(key, "{")
		if n != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(set, l) {
				match = false
				break
			}
		}
		if match {
			sum += v
			series++
		}
	}
	return sum, series
}

// Sum is the sum Family returns: 0 when no series matches.
func (m Metrics) Sum(name string, labels ...string) float64 {
	sum, _ := m.Family(name, labels...)
	return sum
}
