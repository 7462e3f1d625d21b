// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// PDB is the pdb trait, as in Camel K. With enabled: true the integration's pods get a
// PodDisruptionBudget of minAvailable or maxUnavailable (an integer or a percentage; at
// most one of them, maxUnavailable 1 when neither is set).
type PDB struct {
	enabled                      bool
	minAvailable, maxUnavailable *intstr.IntOrString
}

func parsePDB(o *object) PDB {
	enabled := o.boolean("enabled")
	if enabled == nil || !*enabled {
		return PDB{}
	}
	p := PDB{enabled: true, minAvailable: budget(o, "minAvailable"), maxUnavailable: budget(o, "maxUnavailable")}
	if p.minAvailable != nil && p.maxUnavailable != nil {
		raw, _ := o.value("minAvailable")
		o.fail("minAvailable", "must not be set with maxUnavailable: set one of them", raw)
	}
	if p.minAvailable == nil && p.maxUnavailable == nil {
		one := intstr.FromInt32(1)
		p.maxUnavailable = &one
	}
	return p
}

// Budget returns, when the trait is on, the budget's minAvailable or maxUnavailable.
func (p PDB) Budget() (on bool, minAvailable, maxUnavailable *intstr.IntOrString) {
	return p.enabled, p.minAvailable, p.maxUnavailable
}

// budget reads a number of pods or a percentage, also written as a string of digits, as
// Camel K's string fields hold it.
func budget(o *object, key string) *intstr.IntOrString {
	raw, ok := o.value(key)
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil && n >= 0 && strconv.FormatInt(n, 10) == s {
			v := intstr.FromInt32(int32(n))
			return &v
		}
	}
	return o.intOrPercent(key)
}
