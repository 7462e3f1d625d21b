package trait

import (
	"slices"
	"strings"
	"testing"
)

func TestTheCronTraitFindsTheScheduleOfTheConsumersAsCamelKDoes(t *testing.T) {
	c := func(uri string, params map[string]string) Consumer { return Consumer{URI: uri, Parameters: params} }
	cases := []struct {
		name      string
		traits    string
		consumers []Consumer
		schedule  string
		overrides []string
		fallback  bool
	}{
		{name: "a timer of a minute", traits: `{}`, consumers: []Consumer{c("timer:tick?period=60000", nil)}, schedule: "* * * * *"},
		{name: "a timer of five minutes from YAML parameters", traits: `{}`,
			consumers: []Consumer{c("timer:tick", map[string]string{"period": "300000"})}, schedule: "*/5 * * * *"},
		{name: "a timer of two hours written as a duration", traits: `{}`, consumers: []Consumer{c("timer:tick?period=2h", nil)}, schedule: "0 */2 * * *"},
		{name: "a timer of a day", traits: `{}`, consumers: []Consumer{c("timer:tick?period=86400000", nil)}, schedule: "0 0 * * *"},
		{name: "a timer of a second has no schedule", traits: `{}`, consumers: []Consumer{c("timer:tick", nil)}},
		{name: "a timer of seven minutes has no schedule", traits: `{}`, consumers: []Consumer{c("timer:tick?period=420000", nil)}},
		{name: "a delayed timer has no schedule", traits: `{}`, consumers: []Consumer{c("timer:tick?period=60000&delay=5", nil)}},
		{name: "a quartz cron with seconds 0 and a year", traits: `{}`,
			consumers: []Consumer{c("quartz:q?cron=0+0/5+*+*+*+?+*", nil)}, schedule: "0/5 * * * *", overrides: []string{"quartz:q?cron=0+0/5+*+*+*+?+*"}},
		{name: "a cron schedule and a direct consumer", traits: `{}`,
			consumers: []Consumer{c("cron:tab?schedule=0+*/1+*+*+*+?", nil), c("direct:x", nil)}, schedule: "*/1 * * * *",
			overrides: []string{"cron:tab?schedule=0+*/1+*+*+*+?"}},
		{name: "a cron schedule of seconds falls back to a Deployment", traits: `{}`,
			consumers: []Consumer{c("cron:tab?schedule=0/1+*+*+*+*+?", nil)}, fallback: true},
		{name: "a cron schedule given as a YAML parameter", traits: `{}`,
			consumers: []Consumer{c("cron:tab", map[string]string{"schedule": "0 * * * * ?"})}, schedule: "* * * * *", overrides: []string{"cron:tab"}},
		{name: "a cron schedule of five fields, as Camel K's cron-tab case writes it", traits: `{}`,
			consumers: []Consumer{c("cron:tab", map[string]string{"schedule": "*/1 * * * ?"})}, schedule: "*/1 * * * *", overrides: []string{"cron:tab"}},
		{name: "a quartz cron given as a YAML parameter", traits: `{}`,
			consumers: []Consumer{c("quartz:trigger", map[string]string{"cron": "0 */1 * * * ?"})}, schedule: "*/1 * * * *", overrides: []string{"quartz:trigger"}},
		{name: "two schedules that differ have none", traits: `{}`,
			consumers: []Consumer{c("timer:a?period=60000", nil), c("timer:b?period=120000", nil)}},
		{name: "an HTTP consumer keeps the Deployment", traits: `{}`,
			consumers: []Consumer{c("timer:a?period=60000", nil), c("platform-http:/x", nil)}},
		{name: "auto false keeps the Deployment", traits: `{"cron":{"auto":false}}`,
			consumers: []Consumer{c("timer:tick?period=60000", nil)}},
		{name: "a schedule set is kept", traits: `{"cron":{"schedule":"15 3 * * 1"}}`,
			consumers: []Consumer{c("timer:tick", nil)}, schedule: "15 3 * * 1"},
		{name: "enabled false keeps the Deployment", traits: `{"cron":{"enabled":false,"schedule":"15 3 * * 1"}}`,
			consumers: []Consumer{c("timer:tick?period=60000", nil)}},
		{name: "fallback true keeps the Deployment", traits: `{"cron":{"fallback":true}}`,
			consumers: []Consumer{c("cron:tab?schedule=0+*/1+*+*+*+?", nil)}, fallback: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Parse(traits(t, tc.traits))
			if err != nil {
				t.Fatal(err)
			}
			tr = tr.WithConsumers(tc.consumers)
			schedule, overrides, ok := tr.Cron.CronJob()
			if schedule != tc.schedule || ok != (tc.schedule != "") || !slices.Equal(overrides, tc.overrides) {
				t.Errorf("CronJob() = %q, %q, %v; want %q, %q", schedule, overrides, ok, tc.schedule, tc.overrides)
			}
			if got := tr.Cron.Fallback(); got != tc.fallback {
				t.Errorf("Fallback() = %v, want %v", got, tc.fallback)
			}
		})
	}
}

func TestTheCronTraitsJobSettingsDefaultAsInCamelK(t *testing.T) {
	tr, err := Parse(traits(t, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	tz, policy, starting, active, backoff := tr.Cron.Job()
	if tz != nil || policy != "Forbid" || starting != nil || *active != 60 || *backoff != 2 {
		t.Errorf("Job() = %v, %v, %v, %v, %v", tz, policy, starting, *active, *backoff)
	}
	_, err = Parse(traits(t, `{"cron":{"schedule":"* *","timeZone":"Mars/Olympus","concurrencyPolicy":"Sometimes"}}`))
	for _, want := range []string{"trait cron.schedule: must be a Kubernetes CronJob schedule of five fields",
		"trait cron.timeZone: must be a time zone", "trait cron.concurrencyPolicy: must be one of"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
