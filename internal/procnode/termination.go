package procnode

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Termination message limits, as a kubelet's: a container's message is cut
// at 4096 bytes and a pod's at 12 KiB; a message taken from the log is its
// last 80 lines, at most 2048 bytes.
const (
	maxMessageBytes    = 4096
	maxPodMessageBytes = 12 * 1024
	fallbackLogLines   = 80
	fallbackLogBytes   = 2048
)

// terminationLogName is the host file, in the container's directory,
// mounted at its terminationMessagePath.
const terminationLogName = "termination-log"

// terminationLog is the host path of the container's termination message file.
func (c *container) terminationLog() string { return filepath.Join(c.dir, terminationLogName) }

// resetTerminationLog empties the container's termination message file, which
// any container user may write, before each start of its process.
func (c *container) resetTerminationLog() error {
	p := c.terminationLog()
	if err := os.WriteFile(p, nil, 0o666); err != nil {
		return fmt.Errorf("creating the termination message file: %w", err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		return fmt.Errorf("creating the termination message file: %w", err)
	}
	return nil
}

// readTerminationMessage is the message of the container's process that
// ended with code, whose log is logPath.
func (c *container) readTerminationMessage(code int32, logPath string) string {
	limit := maxMessageBytes
	if n := len(c.pod.pod.Spec.Containers); n > 0 {
		limit = min(limit, maxPodMessageBytes/n)
	}
	file, _ := readHead(c.terminationLog(), limit)
	var logTail []byte
	if useLog(file, c.spec.TerminationMessagePolicy, code) {
		// The file's lines carry their times; the message holds what the container wrote.
		limit := fallbackLogBytes + fallbackLogLines*len(time.RFC3339Nano+" ")
		stamped, _ := readTail(logPath, limit)
		if len(stamped) == limit {
			// Read from within a line: drop what is left of it.
			if nl := bytes.IndexByte(stamped, '\n'); nl >= 0 {
				stamped = stamped[nl+1:]
			}
		}
		logTail = untimed(stamped)
	}
	return terminationMessage(file, logTail, c.spec.TerminationMessagePolicy, code)
}

// useLog says whether the log stands in for the file's message: only with
// FallbackToLogsOnError, an empty file and a failure.
func useLog(file []byte, policy corev1.TerminationMessagePolicy, code int32) bool {
	return policy == corev1.TerminationMessageFallbackToLogsOnError && len(file) == 0 && code != 0
}

// terminationMessage chooses a terminated container's message: its file's,
// or the end of its log when useLog says so.
func terminationMessage(file, logTail []byte, policy corev1.TerminationMessagePolicy, code int32) string {
	if !useLog(file, policy, code) {
		return string(file)
	}
	return string(lastLines(lastBytes(logTail, fallbackLogBytes), fallbackLogLines))
}

// lastBytes keeps the last n bytes of data.
func lastBytes(data []byte, n int) []byte {
	if len(data) > n {
		return data[len(data)-n:]
	}
	return data
}

// lastLines keeps the last n lines of data; a final newline ends the last
// line rather than starting another.
func lastLines(data []byte, n int) []byte {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := 0; i < n; i++ {
		nl := bytes.LastIndexByte(data[:end], '\n')
		if nl < 0 {
			return data
		}
		if i == n-1 {
			return data[nl+1:]
		}
		end = nl
	}
	return data
}

// readHead reads at most n bytes from the start of path.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(n)))
}

// readTail reads at most n bytes from the end of path.
func readTail(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off := st.Size() - int64(n); off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, int64(n)))
}
