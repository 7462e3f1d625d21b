package localcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Process is one component process of the local cluster, as recorded in
// the state file.
type Process struct {
	Name   string   `json:"name"`
	PID    int      `json:"pid"`
	Binary string   `json:"binary"`
	Args   []string `json:"args"`
	// Env is added to the machine's environment for the process.
	Env []string `json:"env,omitempty"`
	Log string   `json:"log"`
	// LogStart is the size of the log when this run of the process started:
	// what it printed begins there, after the output of earlier runs.
	LogStart int64 `json:"logStart,omitempty"`
}

// startProcess starts a component in its own session, with output going to
// a log file in dir. With attached, the process is also killed when the
// starting process dies (used by tests, so a crashed test binary leaves no
// cluster behind); otherwise it outlives the caravan command that started it.
func startProcess(dir, name, binary string, args, env []string, attached bool) (*Process, error) {
	logPath := filepath.Join(dir, "logs", name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log of %s: %w", name, err)
	}
	defer logFile.Close()
	var logStart int64
	if info, err := logFile.Stat(); err == nil {
		logStart = info.Size()
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = ownSession()
	if attached {
		DieWithParent(cmd.SysProcAttr)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, PID: cmd.Process.Pid, Binary: binary, Args: args, Env: env, Log: logPath, LogStart: logStart}
	// Reap the child when it exits so that it does not linger as a zombie
	// while the starting process is alive.
	go func() { _ = cmd.Wait() }()
	return p, nil
}

// Alive reports whether the recorded process still runs, and is still the
// program that was started (a PID may have been reused since).
func (p *Process) Alive() bool {
	if p.PID <= 0 {
		return false
	}
	if exe, ok := procExe(p.PID); !ok || exe != p.Binary {
		return false
	}
	// A zombie (state Z) has exited and waits to be reaped.
	state, ok := procState(p.PID)
	return ok && state != "Z"
}

// procExe is the program process pid runs; false when /proc/PID/exe
// cannot be read (the process is gone, or exiting).
func procExe(pid int) (string, bool) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(exe, " (deleted)"), true
}

// procState is the state of process pid in /proc/PID/stat ("Z" for a
// zombie); false when the process is gone.
func procState(pid int) (string, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) == 0 {
		return "", true
	}
	return fields[0], true
}

// stop sends SIGTERM, waits up to grace for the process to exit, then
// sends SIGKILL and waits until it has released what it held.
func (p *Process) stop(grace time.Duration) error {
	if p.released() {
		return nil
	}
	if grace > 0 {
		if err := p.signal(syscall.SIGTERM); err != nil {
			return err
		}
		if p.waitReleased(grace) {
			return nil
		}
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	if !p.waitReleased(30 * time.Second) {
		return fmt.Errorf("%s (pid %d) still runs 30s after SIGKILL", p.Name, p.PID)
	}
	return nil
}

// signal sends sig to the process; one that is already gone is no error.
func (p *Process) signal(sig syscall.Signal) error {
	if err := kill(p.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("sending %s to %s (pid %d): %w", sig, p.Name, p.PID, err)
	}
	return nil
}

// waitReleased polls until the process has released its files and sockets,
// or timeout passes, and reports whether it has.
func (p *Process) waitReleased(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !p.released() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// released reports whether the process has exited far enough that its
// listening ports are free to bind again. A dying process stops looking
// like its program (Alive) before its threads have closed its sockets: the
// kernel drops the memory map, and with it /proc/PID/exe, first. A process
// has released them once it is gone, or a zombie with no thread left.
func (p *Process) released() bool {
	if exe, ok := procExe(p.PID); ok {
		return exe != p.Binary // the PID was reused
	}
	state, ok := procState(p.PID)
	if !ok {
		return true
	}
	if state != "Z" {
		return false
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.PID))
	return err != nil || len(tasks) <= 1
}

// lastLines returns the end of what this run of the process logged, for
// error messages.
func (p *Process) lastLines(n int) string {
	f, err := os.Open(p.Log)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(p.LogStart, io.SeekStart); err != nil {
		return ""
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
