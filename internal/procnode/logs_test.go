package procnode

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestALogKeepsTheTimeOfEachLineAndServesItAsAKubeletDoes(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	clock := t0
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	var stored bytes.Buffer
	if err := copyTimed(&stored, strings.NewReader("one\ntwo\nthree\nno newline"), now); err != nil {
		t.Fatal(err)
	}
	want := "2026-12-04T10:00:01Z one\n2026-12-04T10:00:02Z two\n2026-12-04T10:00:03Z three\n2026-12-04T10:00:04Z no newline\n"
	if stored.String() != want {
		t.Fatalf("stored:\n%s\nwant:\n%s", stored.String(), want)
	}
	lines, rest := parseLog(stored.Bytes())
	if len(lines) != 4 || len(rest) != 0 {
		t.Fatalf("%d lines, rest %q", len(lines), rest)
	}
	for _, tc := range []struct {
		name string
		q    logQuery
		want string
	}{
		{"plain", logQuery{}, "one\ntwo\nthree\nno newline\n"},
		{"tail", logQuery{tail: 2}, "three\nno newline\n"},
		{"since", logQuery{since: t0.Add(3 * time.Second)}, "three\nno newline\n"},
		{"timestamps", logQuery{timestamps: true, tail: 1}, "2026-12-04T10:00:04Z no newline\n"},
	} {
		if got := string(tc.q.render(lines)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := string(untimed([]byte("2026-12-04T10:00:01Z one\n2026-12-04T10:00:02Z half"))); got != "one\nhalf" {
		t.Errorf("untimed: %q", got)
	}
}

func TestFollowServesTheLinesAppendedWholeOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	first := "2026-12-04T10:00:01Z one\n"
	if err := os.WriteFile(path, []byte(first+"2026-12-04T10:00:02Z tw"), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	more := func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	go follow(context.Background(), pw, []byte("one\n"), path, int64(len(first)), logQuery{}, more)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("o\n2026-12-04T10:00:03Z three\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	time.Sleep(600 * time.Millisecond)
	close(done)
	out, err := io.ReadAll(pr)
	if err != nil || string(out) != "one\ntwo\nthree\n" {
		t.Fatalf("followed %q, %v", out, err)
	}
}
