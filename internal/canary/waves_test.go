package canary

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestWavesOfPercentagesOrCountsMoveAtLeastOneMoreEachTime(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		spec string
		n    int
		want []int
	}{
		{"10%,50%,100%", 100, []int{10, 50, 100}},
		{"10%,50%,100%", 7, []int{1, 4, 7}},
		{"10%,50%,100%", 1, []int{1}},
		{"1%,2%,100%", 10, []int{1, 10}},
		{"5,20", 100, []int{5, 20, 100}},
		{"5,20", 12, []int{5, 12}},
		{"100%", 3, []int{3}},
	} {
		waves, err := ParseWaves(tc.spec)
		g.Expect(err).NotTo(HaveOccurred(), tc.spec)
		g.Expect(Sizes(waves, tc.n)).To(Equal(tc.want), "%s of %d", tc.spec, tc.n)
	}
}

func TestBadWavesAreRefusedWithWhatToWrite(t *testing.T) {
	g := NewWithT(t)
	for spec, msg := range map[string]string{
		"10%,50%":      "the last wave of percentages is 100%",
		"50%,10%,100%": "must rise",
		"5,5":          "must rise",
		"10%,20":       "mix counts and percentages",
		"0%,100%":      "from 1% to 100%",
		"150%":         "from 1% to 100%",
		"ten":          "give a count (5) or a percentage (10%)",
		"":             "give a count",
		"-3":           "give a count",
	} {
		_, err := ParseWaves(spec)
		g.Expect(err).To(MatchError(ContainSubstring(msg)), spec)
	}
}
