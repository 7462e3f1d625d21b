// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package trait

import (
	"fmt"
	"strings"
)

// EnvJavaToolOptions is the variable every JVM reads its extra options from, whatever
// launches it.
const EnvJavaToolOptions = "JAVA_TOOL_OPTIONS"

// JVM is the jvm trait, in part: its options (options, and the debug agent of debug,
// debugPort, debugSuspend) reach the runtime's JVM through JAVA_TOOL_OPTIONS, which
// every JVM reads. With enabled: false it reads as defaults.
type JVM struct {
	options []string
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

// ToolOptions is the value of JAVA_TOOL_OPTIONS: the options, space-separated; "" for none.
func (j JVM) ToolOptions() string { return strings.Join(j.options, " ") }
