package pipe

import (
	"errors"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// errUnresolved stands for a Kamelet that Check does not read.
var errUnresolved = errors.New("kamelet not read")

// unresolved is a Resolver that reads no Kamelet, for checks made before the cluster is asked.
type unresolved struct{ namespace string }

func (u unresolved) Namespace() string                              { return u.namespace }
func (unresolved) Kamelet(string, string) (*camelv1.Kamelet, error) { return nil, errUnresolved }

// Check returns what Compile refuses in spec without reading a Kamelet, as caravan bind checks a
// binding offline: an Integration as the source, an endpoint with neither ref nor uri, ...
func Check(spec camelv1.PipeSpec, namespace string) error {
	_, err := Compile(spec, unresolved{namespace: namespace})
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		if errors.Is(err, errUnresolved) {
			return nil
		}
		return err
	}
	var kept []error
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, errUnresolved) {
			kept = append(kept, e)
		}
	}
	return errors.Join(kept...)
}
