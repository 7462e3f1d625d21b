// Package gobuild runs the go command to build binaries, printing short
// progress lines instead of the package list.
package gobuild

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
)

// ProgressInterval is how often Run prints a progress line.
const ProgressInterval = 20 * time.Second

// Run runs cmd, a `go build -v`, and prints a line to out with the number
// of packages compiled so far every ProgressInterval. On failure the error
// carries the last lines the go command printed.
func Run(cmd *exec.Cmd, name string, out io.Writer) error {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	var compiled atomic.Int64
	var tail []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			compiled.Add(1)
			tail = append(tail, sc.Text())
			if len(tail) > 40 {
				tail = tail[1:]
			}
		}
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	ticker := time.NewTicker(ProgressInterval)
	defer ticker.Stop()
	waitErr := make(chan error, 1)
	go func() { <-done; waitErr <- cmd.Wait() }()
	for {
		select {
		case err := <-waitErr:
			if err != nil {
				return fmt.Errorf("%w:\n%s", err, strings.Join(tail, "\n"))
			}
			return nil
		case <-ticker.C:
			fmt.Fprintf(out, "  %s: %d packages compiled, %s elapsed\n",
				name, compiled.Load(), time.Since(start).Round(time.Second))
		}
	}
}

// Lock takes an exclusive lock on the file at path (created if missing),
// waiting for it, so that concurrent builds into one directory take turns.
// The returned function releases it.
func Lock(path string) (func(), error) {
	l := flock.New(path)
	if err := l.Lock(); err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { _ = l.Unlock() }, nil
}
