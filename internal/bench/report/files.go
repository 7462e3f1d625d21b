package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"

	"github.com/caravan-dev/caravan/internal/bench/result"
)

// WriteFiles writes into dir bench.json, the rollout's CPU profiles (the
// API server's of each phase and the operators' of Caravan's, for go tool
// pprof) and one PNG per scenario that ran.
func WriteFiles(dir string, res *result.Results) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if r := res.Rollout; r != nil {
		if err := writeProfile(filepath.Join(dir, "apiserver-floor.pprof"), r.FloorProfile); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(dir, "apiserver-bare.pprof"), r.BareProfile); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(dir, "apiserver-caravan.pprof"), r.CaravanProfile); err != nil {
			return err
		}
		if err := writeProfile(filepath.Join(dir, "operators-caravan.pprof"), r.OperatorsProfile); err != nil {
			return err
		}
	}
	return writePlots(dir, res)
}

// writeProfile writes a profile for go tool pprof.
func writeProfile(path string, p *profile.Profile) error {
	if p == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
