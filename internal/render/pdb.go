// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodDisruptionBudget renders the PodDisruptionBudget <integration> of the pdb trait, or
// nil when the trait is off.
func PodDisruptionBudget(in Input) (*policyv1.PodDisruptionBudget, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	on, minAvailable, maxUnavailable := in.Traits.PDB.Budget()
	if !on {
		return nil, nil
	}
	name := in.Integration.Name
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: in.objectMeta(name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: Selector(name)},
			MinAvailable:   minAvailable,
			MaxUnavailable: maxUnavailable,
		},
	}
	stampHash(pdb)
	return pdb, nil
}
