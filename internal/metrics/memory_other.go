//go:build !linux

package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterProcessMemory registers nothing: the gauges read Linux's /proc.
func RegisterProcessMemory(reg prometheus.Registerer) error { return nil }
