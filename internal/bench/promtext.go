package bench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Sample is one series of a Prometheus text exposition.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples are the series of one scrape.
type Samples []Sample

// ParseMetrics reads the Prometheus text format (comments and blank lines
// are skipped). A malformed series line is an error.
func ParseMetrics(r io.Reader) (Samples, error) {
	var out Samples
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSample reads `name{a="x",b="y"} value [timestamp]`.
func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, fmt.Errorf("no value in %q", line)
	}
	s.Name, line = line[:end], line[end:]
	if strings.HasPrefix(line, "{") {
		rest, err := parseLabels(line[1:], s.Labels)
		if err != nil {
			return s, err
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value for %s", s.Name)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("value of %s: %w", s.Name, err)
	}
	s.Value = v
	return s, nil
}

// parseLabels reads `a="x",b="y"}` into labels and returns what follows
// the closing brace.
func parseLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " ,")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.Index(in, "=")
		if eq <= 0 || len(in) < eq+2 || in[eq+1] != '"' {
			return "", fmt.Errorf("malformed labels at %q", in)
		}
		name := strings.TrimSpace(in[:eq])
		in = in[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(in) && in[i] != '"'; i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(in[i])
				}
				continue
			}
			val.WriteByte(in[i])
		}
		if i == len(in) {
			return "", fmt.Errorf("unterminated value of label %s", name)
		}
		labels[name] = val.String()
		in = in[i+1:]
	}
}

// Sum adds the values of the series called name whose labels hold every
// given pair ("key", "value", ...).
func (s Samples) Sum(name string, labels ...string) float64 {
	var sum float64
	for _, x := range s {
		if x.Name == name && x.matches(labels) {
			sum += x.Value
		}
	}
	return sum
}

// SumFunc adds the values of the series called name that keep says to.
func (s Samples) SumFunc(name string, keep func(labels map[string]string) bool) float64 {
	var sum float64
	for _, x := range s {
		if x.Name == name && keep(x.Labels) {
			sum += x.Value
		}
	}
	return sum
}

func (x Sample) matches(pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if x.Labels[pairs[i]] != pairs[i+1] {
			return false
		}
	}
	return true
}

// Reads and writes split client-go's requests by HTTP method: GET (which
// includes LIST and WATCH) reads, POST, PUT, PATCH and DELETE write.
func isRead(l map[string]string) bool { return l["method"] == "GET" }

func isWrite(l map[string]string) bool {
	switch l["method"] {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}
