package testkit

import "testing"

const exposition = `# HELP workqueue_queue_duration_seconds How long in seconds an item stays in workqueue.
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="monocle",le="0.1"} 50
workqueue_queue_duration_seconds_bucket{name="monocle",le="+Inf"} 100
workqueue_queue_duration_seconds_bucket{name="other",le="+Inf"} 7
monocle_operator_syncs_total{result="success"} 12
monocle_operator_syncs_total{result="error"} 3
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 40
rest_client_requests_total{code="503",host="127.0.0.1:6443",method="GET"} 2
rest_client_requests_total{code="504",host="127.0.0.1:6443",method="PUT"} 1
rest_client_requests_total{code="<error>",host="127.0.0.1:6443",method="GET"} 5
leader_election_master_status{name="monocle-operator"} 0
go_memstats_heap_inuse_bytes 5.7344e+06
malformed_line_without_value
not_a_number{a="b"} abc
`

func TestParseMetrics(t *testing.T) {
	m := ParseMetrics(exposition)
	if len(m) != 11 {
		t.Errorf("parsed %d series, want 11 (comments and malformed lines skipped): %v", len(m), m)
	}
	if v, ok := m[`monocle_operator_syncs_total{result="error"}`]; !ok || v != 3 {
		t.Errorf(`series monocle_operator_syncs_total{result="error"} = %v, %v; want 3`, v, ok)
	}
	for name, tc := range map[string]struct {
		metric string
		labels []string
		sum    float64
		series int
	}{
		"no labels":             {"go_memstats_heap_inuse_bytes", nil, 5.7344e+06, 1},
		"all series":            {"monocle_operator_syncs_total", nil, 15, 2},
		"one label":             {"monocle_operator_syncs_total", []string{`result="error"`}, 3, 1},
		"a label prefix (5xx)":  {"rest_client_requests_total", []string{`code="5`}, 3, 2},
		"two labels":            {"rest_client_requests_total", []string{`code="5`, `method="GET"`}, 2, 1},
		"a label no series has": {"rest_client_requests_total", []string{`code="418"`}, 0, 0},
		"a zero sample counts":  {"leader_election_master_status", []string{`name="monocle-operator"`}, 0, 1},
		"missing metric":        {"nope", nil, 0, 0},
		"no prefix clash":       {"workqueue_queue_duration_seconds", nil, 0, 0},
		"bucket of a name":      {"workqueue_queue_duration_seconds_bucket", []string{`name="other"`}, 7, 1},
		"a name is no label":    {"monocle_operator_syncs_total", []string{"monocle_operator"}, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			sum, series := m.Family(tc.metric, tc.labels...)
			if sum != tc.sum || series != tc.series {
				t.Errorf("Family(%s, %v) = %v, %d; want %v, %d", tc.metric, tc.labels, sum, series, tc.sum, tc.series)
			}
			if got := m.Sum(tc.metric, tc.labels...); got != tc.sum {
				t.Errorf("Sum(%s, %v) = %v, want %v", tc.metric, tc.labels, got, tc.sum)
			}
		})
	}
}
