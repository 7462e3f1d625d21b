package procnode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// A container's log file holds one line per line the container wrote, each after the time it
// was written (RFC 3339, nanoseconds, UTC) and a space, as a kubelet serves it with timestamps.

// copyTimed writes each line read from r to w after the time it was read, until r ends; a last
// line without its newline gets one.
func copyTimed(w io.Writer, r io.Reader, now func() time.Time) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			stamped := append([]byte(now().UTC().Format(time.RFC3339Nano)+" "), line...)
			if _, werr := w.Write(stamped); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// logLine is one line of a log file: when it was written, and what.
type logLine struct {
	at   time.Time
	text []byte // with its newline
}

// parseLine splits a stored line into its time and text; a line without a time keeps it zero.
func parseLine(raw []byte) logLine {
	if i := bytes.IndexByte(raw, ' '); i > 0 {
		if t, err := time.Parse(time.RFC3339Nano, string(raw[:i])); err == nil {
			return logLine{at: t, text: raw[i+1:]}
		}
	}
	return logLine{text: raw}
}

// parseLog splits a log file's complete lines; a last line without its newline is left out, as
// it is still being written.
func parseLog(data []byte) (lines []logLine, rest []byte) {
	for {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return lines, data
		}
		lines = append(lines, parseLine(data[:nl+1]))
		data = data[nl+1:]
	}
}

// logQuery is what a log request asks of the lines: since when, how many last ones, and whether
// with their times.
type logQuery struct {
	since      time.Time
	tail       int
	timestamps bool
}

// render writes the lines q selects, as a kubelet serves them.
func (q logQuery) render(lines []logLine) []byte {
	if !q.since.IsZero() {
		kept := lines[:0:0]
		for _, l := range lines {
			if !l.at.Before(q.since) {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	if q.tail > 0 && len(lines) > q.tail {
		lines = lines[len(lines)-q.tail:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(q.line(l))
	}
	return b.Bytes()
}

// line is one line as served.
func (q logQuery) line(l logLine) []byte {
	if q.timestamps && !l.at.IsZero() {
		return append([]byte(l.at.Format(time.RFC3339Nano)+" "), l.text...)
	}
	return l.text
}

// untimed is data, lines of a log file, without their times: what the container wrote.
func untimed(data []byte) []byte {
	lines, rest := parseLog(data)
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l.text)
	}
	b.Write(parseLine(rest).text)
	return b.Bytes()
}

// follow writes data, then the lines appended to path from offset on, rendered by q, while more
// says so.
func follow(ctx context.Context, w *io.PipeWriter, data []byte, path string, offset int64, q logQuery, more func() bool) {
	if _, err := w.Write(data); err != nil {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		_ = w.CloseWithError(err)
		return
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		_ = w.CloseWithError(err)
		return
	}
	buf := make([]byte, 32*1024)
	var pending []byte
	for {
		n, err := f.Read(buf)
		if n > 0 {
			var lines []logLine
			lines, pending = parseLog(append(pending, buf[:n]...))
			for _, l := range lines {
				if _, werr := w.Write(q.line(l)); werr != nil {
					return
				}
			}
		}
		if err == io.EOF {
			if !more() {
				_ = w.Close()
				return
			}
			select {
			case <-ctx.Done():
				_ = w.Close()
				return
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			_ = w.CloseWithError(fmt.Errorf("reading the log: %w", err))
			return
		}
	}
}
