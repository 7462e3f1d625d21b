package operatorcmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTheJSONLogIsOneObjectALineWithTheVerbosityAsked(t *testing.T) {
	var out bytes.Buffer
	log := NewLogger(LogFormatJSON, 1, &out)
	log.Info("Operator id resolved", "operatorID", "tenant-a")
	log.V(1).Info("shown at verbosity 1")
	log.V(2).Info("hidden at verbosity 1")
	log.Error(nil, "a failure", "namespace", "apps")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %d:\n%s", len(lines), out.String())
	}
	var first, last map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("line 1 is not JSON: %v: %s", err, lines[0])
	}
	if err := json.Unmarshal([]byte(lines[2]), &last); err != nil {
		t.Fatalf("line 3 is not JSON: %v: %s", err, lines[2])
	}
	if first["msg"] != "Operator id resolved" || first["operatorID"] != "tenant-a" || first["level"] != "INFO" || first["time"] == nil {
		t.Errorf("line 1: %v", first)
	}
	if last["level"] != "ERROR" || last["namespace"] != "apps" {
		t.Errorf("line 3: %v", last)
	}
	out.Reset()
	NewLogger(LogFormatText, 0, &out).Info("plain", "k", "v")
	if strings.HasPrefix(out.String(), "{") || !strings.Contains(out.String(), `"plain" k="v"`) {
		t.Errorf("the text log: %q", out.String())
	}
}

func TestAnUnknownLogFormatIsRefused(t *testing.T) {
	o := &Options{LogFormat: "xml", HeartbeatInterval: 10e9}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--log-format must be text or json, got "xml"`) {
		t.Fatalf("got %v", err)
	}
}
