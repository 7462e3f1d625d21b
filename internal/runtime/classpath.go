// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runtime

import (
	"archive/zip"
	"bytes"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ClasspathManifest is the jar at ClasspathJar for a kit's jars: a manifest alone, whose
// Class-Path lists the jars at locations, sorted, relative to it. The same jars give the same bytes.
func ClasspathManifest(locations []string) ([]byte, error) {
	var rel []string
	for _, l := range slices.Compact(slices.Sorted(slices.Values(locations))) {
		rel = append(rel, strings.TrimPrefix(l, path.Dir(ClasspathJar)+"/"))
	}
	manifest := "Manifest-Version: 1.0\r\n" + manifestLine("Class-Path: "+strings.Join(rel, " ")) +
		"Created-By: Caravan\r\n\r\n"
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "META-INF/MANIFEST.MF", Method: zip.Deflate,
		Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return nil, err
	}
	if _, err := w.Write([]byte(manifest)); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// manifestLine writes a manifest header as the JAR specification has it: lines of at most 72
// bytes, each continued on the next after one space.
func manifestLine(header string) string {
	const width = 72
	var b strings.Builder
	for first := true; header != ""; first = false {
		n := width
		if !first {
			b.WriteByte(' ')
			n--
		}
		n = min(n, len(header))
		for n < len(header) && !utf8.RuneStart(header[n]) {
			n-- // a character is never split
		}
		b.WriteString(header[:n])
		b.WriteString("\r\n")
		header = header[n:]
	}
	return b.String()
}
