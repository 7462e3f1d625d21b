package operatorcmd

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"

	"github.com/caravan-dev/caravan/internal/install"
)

// setMemoryLimit sets the Go runtime's soft memory limit to 90% of the
// container's memory limit, and returns it. install.MemoryLimitEnv gives
// the container's limit in bytes. It returns 0 when GOMEMLIMIT is set
// (the runtime has applied it) or when the container has no limit. A
// value that is not a number of bytes is an error naming the variable.
func setMemoryLimit(getenv func(string) string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	raw := strings.TrimSpace(getenv(install.MemoryLimitEnv))
	if raw == "" {
		return 0, nil
	}
	limit, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || limit < 0 {
		return 0, fmt.Errorf("%s must be the container's memory limit in bytes, got %q", install.MemoryLimitEnv, raw)
	}
	if limit == 0 {
		return 0, nil
	}
	soft := limit / 10 * 9
	debug.SetMemoryLimit(soft)
	return soft, nil
}

// applyMemoryLimit sets the soft memory limit as setMemoryLimit does, and
// logs it.
func applyMemoryLimit(logger logr.Logger, getenv func(string) string) error {
	limit, err := setMemoryLimit(getenv)
	if limit > 0 {
		logger.Info("Go memory limit set to 90% of the container's", "bytes", limit)
	}
	return err
}
