// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
)

// Consumer is an endpoint a route consumes from.
type Consumer struct {
	// URI is the endpoint as the route writes it.
	URI string
	// Parameters are options the YAML DSL gives beside the URI, nil for none.
	Parameters map[string]string
}

// scheme is the consumer's component.
func (c Consumer) scheme() string { s, _, _ := strings.Cut(c.URI, ":"); return s }

// options are the consumer's options: the URI's query, under Parameters.
func (c Consumer) options() url.Values {
	_, query, _ := strings.Cut(c.URI, "?")
	v, err := url.ParseQuery(query)
	if err != nil {
		v = url.Values{}
	}
	for k, p := range c.Parameters {
		v.Set(k, p)
	}
	return v
}

// Defaults of the cron trait's CronJob, as in Camel K.
const (
	DefaultCronActiveDeadlineSeconds = int64(60)
	DefaultCronBackoffLimit          = int32(2)
	// OneShotURI is the endpoint a quartz or cron consumer becomes in a CronJob's pod: a timer
	// that fires once, at once, as in Camel K.
	OneShotURI = "timer:camel-k-overridden-cron?delay=0&period=1&repeatCount=1"
)

// Cron is the cron trait, as in Camel K: an integration whose every consumer is a timer, quartz
// or cron endpoint on one schedule (or a direct or seda one) runs as a CronJob whose pods stop
// after one exchange, instead of a Deployment. auto (default on) finds the schedule; schedule
// sets it. A cron: consumer with no schedule that fits falls back to a Deployment on quartz.
type Cron struct {
	enabled, auto, fallback  *bool
	schedule, timeZone       string
	concurrencyPolicy        batchv1.ConcurrencyPolicy
	startingDeadlineSeconds  *int64
	activeDeadlineSeconds    *int64
	backoffLimit             *int32
	consumersSchedule        string
	consumersOK, cronWritten bool
	overrides                []string
}

func parseCron(o *object) Cron {
	c := Cron{enabled: o.boolean("enabled"), auto: o.boolean("auto"), fallback: o.boolean("fallback"),
		schedule: o.str("schedule"), timeZone: o.str("timeZone"),
		concurrencyPolicy: batchv1.ConcurrencyPolicy(o.oneOf("concurrencyPolicy",
			string(batchv1.AllowConcurrent), string(batchv1.ForbidConcurrent), string(batchv1.ReplaceConcurrent))),
	}
	if c.schedule != "" && len(strings.Fields(c.schedule)) != 5 {
		raw, _ := o.value("schedule")
		o.fail("schedule", "must be a Kubernetes CronJob schedule of five fields", raw)
	}
	if c.timeZone != "" {
		if _, err := time.LoadLocation(c.timeZone); err != nil {
			raw, _ := o.value("timeZone")
			o.fail("timeZone", "must be a time zone of the tz database, such as Europe/Rome", raw)
		}
	}
	c.startingDeadlineSeconds = o.integer("startingDeadlineSeconds", 0, 1<<31)
	c.activeDeadlineSeconds = o.integer("activeDeadlineSeconds", 1, 1<<31)
	if n := o.integer("backoffLimit", 0, 1<<20); n != nil {
		v := int32(*n)
		c.backoffLimit = &v
	}
	return c
}

// WithConsumers returns t for routes that consume from consumers, which the cron trait's auto
// mode reads.
func (t Traits) WithConsumers(consumers []Consumer) Traits {
	t.Cron.consumersSchedule, t.Cron.overrides, t.Cron.consumersOK = consumersSchedule(consumers)
	t.Cron.cronWritten = slices.ContainsFunc(consumers, func(c Consumer) bool { return c.scheme() == "cron" })
	return t
}

// CronJob tells whether the integration runs as a CronJob, on which schedule; overrides are the
// consumers (as written) that its pods replace by OneShotURI.
func (c Cron) CronJob() (schedule string, overrides []string, ok bool) {
	switch {
	case c.enabled != nil && !*c.enabled, c.fallback != nil && *c.fallback:
		return "", nil, false
	case c.schedule != "":
		return c.schedule, slices.Clone(c.overrides), true
	case (c.auto == nil || *c.auto) && c.consumersOK:
		return c.consumersSchedule, slices.Clone(c.overrides), true
	}
	return "", nil, false
}

// Fallback tells whether cron: consumers run in a Deployment, on the quartz component, as Camel
// K's fallback does: there is one, and no CronJob.
func (c Cron) Fallback() bool {
	if _, _, ok := c.CronJob(); ok || (c.enabled != nil && !*c.enabled) {
		return false
	}
	return c.cronWritten
}

// Job are the CronJob's settings: time zone (nil for the controller's), concurrency policy,
// starting deadline, and its jobs' active deadline and backoff limit.
func (c Cron) Job() (timeZone *string, policy batchv1.ConcurrencyPolicy, startingDeadline, activeDeadline *int64, backoffLimit *int32) {
	if c.timeZone != "" {
		tz := c.timeZone
		timeZone = &tz
	}
	policy = c.concurrencyPolicy
	if policy == "" {
		policy = batchv1.ForbidConcurrent
	}
	activeDeadline, backoffLimit = c.activeDeadlineSeconds, c.backoffLimit
	if activeDeadline == nil {
		v := DefaultCronActiveDeadlineSeconds
		activeDeadline = &v
	}
	if backoffLimit == nil {
		v := DefaultCronBackoffLimit
		backoffLimit = &v
	}
	return timeZone, policy, c.startingDeadlineSeconds, activeDeadline, backoffLimit
}

// passiveConsumers are components that only take what other routes send: they do not keep a
// CronJob's pod from ending.
var passiveConsumers = []string{"direct", "seda"}

// consumersSchedule is the one schedule that every scheduling consumer fires on, as Camel K
// reads it, and the quartz and cron consumers to replace by a one-shot timer; ok is false when
// a consumer has no schedule that a CronJob can keep, or two disagree.
func consumersSchedule(consumers []Consumer) (schedule string, overrides []string, ok bool) {
	for _, c := range consumers {
		var s string
		opts := c.options()
		switch c.scheme() {
		case "timer":
			s = timerSchedule(opts)
		case "quartz":
			if opts.Has("cron") && !slices.ContainsFunc([]string{"fireNow", "customCalendar", "startDelayedSeconds"}, opts.Has) {
				s = cronSchedule(opts.Get("cron"))
			}
		case "cron":
			if opts.Has("schedule") {
				s = cronSchedule(opts.Get("schedule"))
			}
		default:
			if slices.Contains(passiveConsumers, c.scheme()) {
				continue
			}
			return "", nil, false
		}
		if s == "" || (schedule != "" && s != schedule) {
			return "", nil, false
		}
		schedule = s
		if c.scheme() != "timer" && !slices.Contains(overrides, c.URI) {
			overrides = append(overrides, c.URI)
		}
	}
	return schedule, overrides, schedule != ""
}

// timerSchedule is the schedule of a timer that fires every period, when it is a whole number of
// minutes that divides an hour, or of hours that divides a day; "" otherwise, or when the timer
// is delayed, counted or timed.
func timerSchedule(o url.Values) string {
	if o.Has("delay") || o.Has("repeatCount") || o.Has("time") {
		return ""
	}
	period := time.Second
	if p := o.Get("period"); p != "" {
		if ms, err := strconv.ParseInt(p, 10, 64); err == nil {
			period = time.Duration(ms) * time.Millisecond
		} else if d, err := time.ParseDuration(p); err == nil {
			period = d
		} else {
			return ""
		}
	}
	switch m := int64(period / time.Minute); {
	case period%time.Minute != 0 || m <= 0:
		return ""
	case m == 1:
		return "* * * * *"
	case m < 60 && 60%m == 0:
		return "*/" + strconv.FormatInt(m, 10) + " * * * *"
	case m%60 == 0 && m/60 < 24 && 24%(m/60) == 0:
		return "0 */" + strconv.FormatInt(m/60, 10) + " * * *"
	case m == 24*60:
		return "0 0 * * *"
	}
	return ""
}

// cronSchedule turns a cron expression into a Kubernetes schedule, as Camel K does: five fields
// as they are, or Quartz's (seconds first, an optional year last) with seconds 0 and any year;
// '?' reads as '*'. "" when it cannot.
func cronSchedule(expr string) string {
	f := strings.Fields(expr)
	if len(f) > 5 {
		if f[0] != "0" {
			return ""
		}
		f = f[1:]
	}
	if len(f) == 6 && (f[5] == "*" || f[5] == "?") {
		f = f[:5]
	}
	if len(f) != 5 {
		return ""
	}
	for i := range f {
		if f[i] == "?" {
			f[i] = "*"
		}
	}
	return strings.Join(f, " ")
}
