package measure

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// auditEvent is the part of an API server audit event the bench reads.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// WritesByKind counts the successful writes that users whose names begin
// with userPrefix made in namespace since a moment, by "verb
// resource[/subresource]".
func WritesByKind(path, namespace, userPrefix string, since time.Time) (map[string]int, error) {
	out := map[string]int{}
	err := readAudit(path, func(ev auditEvent) {
		if ev.ObjectRef.Namespace == namespace && strings.HasPrefix(ev.User.Username, userPrefix) &&
			!ev.StageTimestamp.Before(since) {
			out[ev.what()]++
		}
	})
	return out, err
}

// readAudit calls fn with every successful write of the audit log at path.
func readAudit(path string, fn func(auditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		if ev.ObjectRef == nil || !writeVerb(ev.Verb) || (ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 300) {
			continue
		}
		fn(ev)
	}
	return sc.Err()
}

func (ev auditEvent) what() string {
	what := ev.Verb + " " + ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		what += "/" + ev.ObjectRef.Subresource
	}
	return what
}

// FromWrites are the writes the old owner made after the moves.
type FromWrites struct {
	// Release are the writes of the release itself: per integration, its
	// first status write (recording the release) and its first write of
	// the integration's metadata (handing the label over).
	Release int
	// Beyond are the others, by "verb resource[/subresource]".
	Beyond map[string]int
}

// WritesAfter reads, in the audit log at path, the successful writes
// user made in namespace to an integration of since, its children or
// Events about it, after since[integration].
func WritesAfter(path, user, namespace string, since map[string]time.Time) (FromWrites, error) {
	out := FromWrites{Beyond: map[string]int{}}
	statusDone, labelDone := map[string]bool{}, map[string]bool{}
	err := readAudit(path, func(ev auditEvent) {
		ref := ev.ObjectRef
		if ev.User.Username != user || ref.Namespace != namespace {
			return
		}
		it := integrationOf(ref.Resource, ref.Name)
		at, ok := since[it]
		if !ok || !ev.StageTimestamp.After(at) {
			return
		}
		switch {
		case ref.Resource == "integrations" && ref.Subresource == "status" && !statusDone[it]:
			statusDone[it] = true
			out.Release++
		case ref.Resource == "integrations" && ref.Subresource == "" && !labelDone[it]:
			labelDone[it] = true
			out.Release++
		default:
			out.Beyond[ev.what()]++
		}
	})
	return out, err
}

func writeVerb(v string) bool {
	switch v {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// integrationOf names the integration an object belongs to: a child is
// named after it (the ConfigMap with a -camel suffix), an Event after the
// object it is about followed by a dot and a suffix.
func integrationOf(resource, name string) string {
	switch resource {
	case "events":
		if i := strings.LastIndex(name, "."); i > 0 {
			return name[:i]
		}
	case "configmaps":
		return strings.TrimSuffix(name, "-camel")
	}
	return name
}
