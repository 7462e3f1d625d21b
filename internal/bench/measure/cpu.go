package measure

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on every Linux platform Go supports).
const clockTicks = 100

// ProcessCPU returns the CPU seconds (user and system) a process has used.
func ProcessCPU(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last closing parenthesis. utime and stime are fields 14
	// and 15 of the line, 12 and 13 after the name.
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	var ticks float64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return ticks / clockTicks, nil
}

// CPUSince returns the CPU seconds the bench's own process has used since
// before (a ProcessCPU reading of it).
func CPUSince(before float64) (float64, error) {
	now, err := ProcessCPU(os.Getpid())
	if err != nil {
		return 0, err
	}
	return Round3(now - before), nil
}
