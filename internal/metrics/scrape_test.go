package metrics

import (
	"strings"
	"testing"
)

const exposition = `# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 12
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 3
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 4
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PUT"} 1
camel_k_reconciliation_duration_seconds_count{kind="Integration",operator_id="a",result="Reconciled"} 7
camel_k_reconciliation_duration_seconds_count{kind="Integration",operator_id="a",result="Requeued"} 2
camel_k_reconciliation_duration_seconds_count{kind="Build",operator_id="a",result="Reconciled"} 5
weird{msg="a \"quoted\", comma, } brace"} 1.5e3
go_memstats_heap_alloc_bytes 2.5e+07
process_cpu_seconds_total 1.25 1712345678000
`

func TestParseText(t *testing.T) {
	s, err := ParseText(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"a series without labels is read", s.Sum("go_memstats_heap_alloc_bytes"), 25e6},
		{"a timestamp after the value is ignored", s.Sum("process_cpu_seconds_total"), 1.25},
		{"series are summed over the labels not asked for", s.Sum("camel_k_reconciliation_duration_seconds_count", "kind", "Integration"), 9},
		{"reads are GET requests", s.SumFunc("rest_client_requests_total", func(l map[string]string) bool { return l["method"] == "GET" }), 12},
		{"writes are POST, PUT, PATCH and DELETE requests", s.SumFunc("rest_client_requests_total", func(l map[string]string) bool { return l["method"] != "GET" }), 8},
		{"quoted label values may hold commas, braces and escaped quotes", s.Sum("weird", "msg", `a "quoted", comma, } brace`), 1500},
		{"an absent series sums to zero", s.Sum("absent"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestAMalformedScrapeIsRefused(t *testing.T) {
	for _, line := range []string{`x{a="1"`, `x{a=1} 2`, `x`, `x{a="1"} notanumber`} {
		if _, err := ParseText(strings.NewReader(line + "\n")); err == nil {
			t.Errorf("ParseText(%q) succeeded", line)
		}
	}
}

func TestHistogramsAndSummariesAreFlattenedAsTheirTextExposition(t *testing.T) {
	s, err := ParseText(strings.NewReader(`# TYPE d histogram
d_bucket{kind="a",le="0.5"} 3
d_bucket{kind="a",le="+Inf"} 5
d_sum{kind="a"} 1.5
d_count{kind="a"} 5
# TYPE q summary
q{quantile="0.9"} 7
q_sum 20
q_count 4
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"d_count", []string{"kind", "a"}, 5}, {"d_sum", nil, 1.5}, {"d_bucket", []string{"le", "+Inf"}, 5},
		{"d_bucket", []string{"le", "0.5"}, 3}, {"q", []string{"quantile", "0.9"}, 7}, {"q_count", nil, 4},
	} {
		if got, found := s.Find(c.name, c.labels...); !found || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, found, c.want)
		}
	}
	if _, found := s.Find("absent"); found {
		t.Error("an absent series was found")
	}
}
