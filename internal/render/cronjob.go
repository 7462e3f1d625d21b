// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package render

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronJob renders the CronJob <integration> of the cron trait, whose jobs run the integration's
// pod once, or nil when the integration runs as a Deployment. Its pods never restart: a failed
// run is a failed job, retried as backoffLimit says.
func CronJob(in Input) (*batchv1.CronJob, error) {
	if !in.runsAsCronJob() {
		return nil, in.check()
	}
	schedule, _, _ := in.Traits.Cron.CronJob()
	pod, err := in.pod()
	if err != nil {
		return nil, err
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	timeZone, policy, startingDeadline, activeDeadline, backoffLimit := in.Traits.Cron.Job()
	cj := &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: in.objectMeta(in.Integration.Name),
		Spec: batchv1.CronJobSpec{
			Schedule: schedule, TimeZone: timeZone, ConcurrencyPolicy: policy, StartingDeadlineSeconds: startingDeadline,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Selector(in.Integration.Name)},
				Spec:       batchv1.JobSpec{ActiveDeadlineSeconds: activeDeadline, BackoffLimit: backoffLimit, Template: pod},
			},
		},
	}
	stampHash(cj)
	return cj, nil
}
