package operatorcmd

import (
	"math"
	"runtime/debug"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/caravan-dev/caravan/internal/install"
)

func TestTheGoMemoryLimitIsNinetyPercentOfTheContainers(t *testing.T) {
	g := NewWithT(t)
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}

	limit, err := setMemoryLimit(env(map[string]string{install.MemoryLimitEnv: "536870912"}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(limit).To(Equal(int64(536870912 / 10 * 9)))
	g.Expect(debug.SetMemoryLimit(-1)).To(Equal(limit))

	debug.SetMemoryLimit(math.MaxInt64)
	for _, vars := range []map[string]string{
		{},
		{install.MemoryLimitEnv: "0"},
		{install.MemoryLimitEnv: "536870912", "GOMEMLIMIT": "100MiB"},
	} {
		limit, err := setMemoryLimit(env(vars))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(limit).To(BeZero(), "%v", vars)
		g.Expect(debug.SetMemoryLimit(-1)).To(Equal(int64(math.MaxInt64)), "%v changed the limit", vars)
	}

	_, err = setMemoryLimit(env(map[string]string{install.MemoryLimitEnv: "512Mi"}))
	g.Expect(err).To(MatchError(ContainSubstring(install.MemoryLimitEnv + ` must be the container's memory limit in bytes, got "512Mi"`)))
}
