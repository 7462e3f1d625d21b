// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// EnvJavaToolOptions is the variable every JVM reads its extra options from, whatever
// launches it.
const EnvJavaToolOptions = "JAVA_TOOL_OPTIONS"

// DefaultMemoryLimit is the memory limit the heap is sized for when the container has none:
// Camel K's default limit of the integration container.
var DefaultMemoryLimit = resource.MustParse("512Mi")

// DefaultDebugAddress is where the debug agent listens without jvm.debugAddress, Camel K's.
const DefaultDebugAddress = "*:5005"

// JVM is the jvm trait, in part: its options and its classpath go on the runtime's java
// command line. The options are options and the debug agent of debug, debugAddress and
// debugSuspend; the classpath's entries are separated by ':', as Camel K writes it. With
// enabled: false the container runs its image's entrypoint, as on Camel K.
type JVM struct {
	disabled   bool
	options    []string
	classpath  []string
	debug      bool
	truststore *Truststore
}

func parseJVM(o *object) JVM {
	if o.disabled() {
		return JVM{disabled: true}
	}
	var j JVM
	for i, opt := range o.strs("options") {
		if strings.TrimSpace(opt) == "" || strings.ContainsAny(opt, "\n\r") {
			o.failItem("options", i, "must be one JVM option, such as -Xmx512m", opt)
			continue
		}
		j.options = append(j.options, opt)
	}
	for _, entry := range strings.Split(o.str("classpath"), ":") {
		switch entry = strings.TrimSpace(entry); {
		case entry == "":
		case strings.ContainsAny(entry, ",\n\r"):
			o.fail("classpath", "must be paths separated by ':', none holding ',' or a line break", json.RawMessage(strconv.Quote(entry)))
		default:
			j.classpath = append(j.classpath, entry)
		}
	}
	if j.truststore = parseTruststore(o); j.truststore != nil {
		j.options = append(j.options, j.truststore.Options()...)
	}
	if debug := o.boolean("debug"); debug != nil && *debug {
		address := o.str("debugAddress")
		if address == "" {
			address = DefaultDebugAddress
		}
		host, port := "", address
		if i := strings.LastIndex(address, ":"); i >= 0 {
			host, port = address[:i], address[i+1:]
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strings.ContainsAny(host, ", \t\n\r") {
			o.fail("debugAddress", "must be [HOST:]PORT, such as *:5005", json.RawMessage(strconv.Quote(address)))
			return j
		}
		suspend := "n"
		if s := o.boolean("debugSuspend"); s != nil && *s {
			suspend = "y"
		}
		j.debug = true
		j.options = append(j.options, fmt.Sprintf("-agentlib:jdwp=transport=dt_socket,server=y,suspend=%s,address=%s", suspend, address))
	}
	return j
}

// Enabled tells whether the runtime's java command runs the container: not with enabled: false.
func (j JVM) Enabled() bool { return !j.disabled }

// Options are the JVM options, the debug agent last; nil for none.
func (j JVM) Options() []string { return slices.Clone(j.options) }

// Classpath are the classpath entries, in order; nil for none.
func (j JVM) Classpath() []string { return slices.Clone(j.classpath) }

// Truststore is the truststore of jvm.caCertificates the JVM trusts; nil for none.
func (j JVM) Truststore() *Truststore { return j.truststore }

// Debug tells whether jvm.debug is on. Camel K turns the health probes off meanwhile.
func (j JVM) Debug() bool { return j.debug }

// ToolOptions is the value of JAVA_TOOL_OPTIONS: the options, space-separated; "" for none.
func (j JVM) ToolOptions() string { return strings.Join(j.options, " ") }

// MaxHeap is the -Xmx option for a container with memory limit (nil for none: DefaultMemoryLimit),
// by Camel K's rule: half the limit, a quarter under 300M; "" when the options size the heap.
func (j JVM) MaxHeap(limit *resource.Quantity) string {
	for _, opt := range j.options {
		for _, sized := range []string{"-Xmx", "-XX:MaxHeapSize", "-XX:MinRAMPercentage", "-XX:MaxRAMPercentage"} {
			if strings.Contains(opt, sized) {
				return ""
			}
		}
	}
	if limit == nil {
		limit = &DefaultMemoryLimit
	}
	percent := int64(50)
	if limit.Cmp(*resource.NewScaledQuantity(300, resource.Mega)) < 0 {
		percent = 25
	}
	return fmt.Sprintf("-Xmx%dM", limit.ScaledValue(resource.Mega)*percent/100)
}
