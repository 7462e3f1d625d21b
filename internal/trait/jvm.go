// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// EnvJavaToolOptions is the variable every JVM reads its extra options from, whatever
// launches it.
const EnvJavaToolOptions = "JAVA_TOOL_OPTIONS"

// ClasspathProperty is the runtime property that adds files to the default runtime's
// classpath, comma-separated.
const ClasspathProperty = "camel.jbang.classpathFiles"

// JVM is the jvm trait, in part: its options (options, and the debug agent of debug,
// debugPort, debugSuspend) reach the runtime's JVM through JAVA_TOOL_OPTIONS, which
// every JVM reads, and its classpath (entries separated by ':', as Camel K writes it)
// reaches the default runtime through ClasspathProperty. With enabled: false it reads
// as defaults.
type JVM struct {
	options   []string
	classpath []string
}

func parseJVM(o *object) JVM {
	if o.disabled() {
		return JVM{}
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
	if debug := o.boolean("debug"); debug != nil && *debug {
		port := o.port("debugPort")
		if port == 0 {
			port = 5005
		}
		suspend := "n"
		if s := o.boolean("debugSuspend"); s != nil && *s {
			suspend = "y"
		}
		j.options = append(j.options, fmt.Sprintf("-agentlib:jdwp=transport=dt_socket,server=y,suspend=%s,address=*:%d", suspend, port))
	}
	return j
}

// Classpath are the classpath entries, in order; nil for none.
func (j JVM) Classpath() []string { return slices.Clone(j.classpath) }

// ToolOptions is the value of JAVA_TOOL_OPTIONS: the options, space-separated; "" for none.
func (j JVM) ToolOptions() string { return strings.Join(j.options, " ") }
