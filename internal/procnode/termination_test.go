package procnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestTheTerminationMessageComesFromTheFileThenTheLogOnError(t *testing.T) {
	log := []byte("starting\nfailed: no such component\n")
	for _, tc := range []struct {
		name   string
		file   string
		policy corev1.TerminationMessagePolicy
		code   int32
		want   string
	}{
		{"the file's message is kept as written", "built\n", corev1.TerminationMessageReadFile, 0, "built\n"},
		{"an empty file gives no message under ReadFile, even on failure", "", corev1.TerminationMessageReadFile, 1, ""},
		{"an empty file on failure gives the log's end under FallbackToLogsOnError", "", corev1.TerminationMessageFallbackToLogsOnError, 3, string(log)},
		{"an empty file on success gives no message under FallbackToLogsOnError", "", corev1.TerminationMessageFallbackToLogsOnError, 0, ""},
		{"the file wins over the log on failure", "bad input", corev1.TerminationMessageFallbackToLogsOnError, 1, "bad input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(terminationMessage([]byte(tc.file), log, tc.policy, tc.code)).To(Equal(tc.want))
		})
	}
}

func TestTheLogsFallbackIsItsLast80LinesWithinItsLast2048Bytes(t *testing.T) {
	g := NewWithT(t)
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	log := []byte(strings.Join(lines, "\n") + "\n")
	got := terminationMessage(nil, log, corev1.TerminationMessageFallbackToLogsOnError, 1)
	g.Expect(got).To(Equal(strings.Join(lines[20:], "\n") + "\n"))

	long := []byte(strings.Repeat("x", 3000) + "\nlast\n")
	got = terminationMessage(nil, long, corev1.TerminationMessageFallbackToLogsOnError, 1)
	g.Expect(got).To(HaveLen(fallbackLogBytes))
	g.Expect(got).To(HaveSuffix("x\nlast\n"))
}

func TestLastLinesCountsAFinalLineWithoutNewline(t *testing.T) {
	g := NewWithT(t)
	g.Expect(string(lastLines([]byte("a\nb\nc"), 2))).To(Equal("b\nc"))
	g.Expect(string(lastLines([]byte("a\nb\nc\n"), 2))).To(Equal("b\nc\n"))
	g.Expect(string(lastLines([]byte("only\n"), 2))).To(Equal("only\n"))
	g.Expect(string(lastLines(nil, 2))).To(BeEmpty())
}

func TestAContainersMessageIsReadUpTo4096BytesOfItsFile(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	c := &container{dir: dir, pod: &podRun{pod: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}}}
	g.Expect(c.resetTerminationLog()).To(Succeed())
	st, err := os.Stat(c.terminationLog())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Mode().Perm()).To(Equal(os.FileMode(0o666)), "any container user writes it")
	g.Expect(os.WriteFile(c.terminationLog(), []byte(strings.Repeat("m", 5000)), 0o666)).To(Succeed())
	g.Expect(c.readTerminationMessage(0, filepath.Join(dir, "0.log"))).To(HaveLen(maxMessageBytes))

	g.Expect(c.resetTerminationLog()).To(Succeed())
	g.Expect(c.readTerminationMessage(0, filepath.Join(dir, "0.log"))).To(BeEmpty(), "each start begins with an empty file")

	c.spec.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	logPath := filepath.Join(dir, "0.log")
	g.Expect(os.WriteFile(logPath, []byte(strings.Repeat("noise\n", 1000)+"MARKER\n"), 0o644)).To(Succeed())
	msg := c.readTerminationMessage(3, logPath)
	g.Expect(msg).To(HaveSuffix("noise\nMARKER\n"))
	g.Expect(strings.Count(msg, "\n")).To(Equal(fallbackLogLines))
}

func TestAPodsMessagesShareTwelveKibibytes(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: make([]corev1.Container, 4)}}
	c := &container{dir: dir, pod: &podRun{pod: pod}}
	g.Expect(os.WriteFile(c.terminationLog(), []byte(strings.Repeat("m", 5000)), 0o666)).To(Succeed())
	g.Expect(c.readTerminationMessage(0, filepath.Join(dir, "0.log"))).To(HaveLen(maxPodMessageBytes / 4))
}
