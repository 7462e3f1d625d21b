package fleet

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

func TestAnOperatorIsAppliedAgainOnANewDeclarationOrAfterConvergeEvery(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	iop := func(uid string, generation int64) *camelv1alpha1.IntegrationOperator {
		return &camelv1alpha1.IntegrationOperator{ObjectMeta: metav1.ObjectMeta{Name: "v2", UID: types.UID("uid-" + uid), Generation: generation}}
	}
	var marks convergeMarks
	if marks.recent(iop("a", 1), now) {
		t.Error("an operator never applied counts as applied")
	}
	marks.mark(iop("a", 1), now)
	for _, tc := range []struct {
		name string
		iop  *camelv1alpha1.IntegrationOperator
		at   time.Time
		want bool
	}{
		{"the same declaration a minute later is still applied", iop("a", 1), now.Add(time.Minute), true},
		{"a new generation is applied again", iop("a", 2), now.Add(time.Minute), false},
		{"a declaration made again under the same name is applied again", iop("b", 1), now.Add(time.Minute), false},
		{"the same declaration is applied again after convergeEvery", iop("a", 1), now.Add(convergeEvery), false},
	} {
		if got := marks.recent(tc.iop, tc.at); got != tc.want {
			t.Errorf("%s: recent is %t", tc.name, got)
		}
	}
}
