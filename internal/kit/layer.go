// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package kit

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/caravan-dev/caravan/internal/runtime"
)

const (
	// Dir is the directory of the kit layer in the image.
	Dir = runtime.KitDir
	// DependenciesFile lists the kit's dependencies, one a line.
	DependenciesFile = Dir + "dependencies.txt"
	// PropertiesFile holds the runtime settings and the kit hash, as Java properties.
	PropertiesFile = Dir + "kit.properties"
	// RepositoriesFile lists the extra Maven repositories, one a line, when there are any.
	RepositoriesFile = Dir + "repositories.txt"

	// FileMode is the mode of every kit file.
	FileMode int64 = 0o644

	// Keys of PropertiesFile.
	PropertyRuntimeVersion  = "camel.runtime.version"
	PropertyRuntimeProvider = "camel.runtime.provider"
	PropertyHash            = "camel.kit.hash"
)

// File is one regular file of the kit layer.
type File struct {
	// Path is the absolute path of the file in the image.
	Path string
	// Mode is the file's permission bits.
	Mode int64
	// Content is the file's content.
	Content []byte
}

// Layer returns the files of the kit layer of s, sorted by path, all under Dir: the
// same Spec always gives the same bytes. It fails when s cannot be written down
// faithfully: a missing runtime version or provider (resolve the platform first), or a
// dependency, repository or setting that contains white space or control characters.
func Layer(s Spec) ([]File, error) {
	s = s.normalized()
	if err := validate(s); err != nil {
		return nil, err
	}
	var props bytes.Buffer
	fmt.Fprintf(&props, "%s=%s\n", PropertyRuntimeVersion, s.RuntimeVersion)
	fmt.Fprintf(&props, "%s=%s\n", PropertyRuntimeProvider, s.RuntimeProvider)
	fmt.Fprintf(&props, "%s=%s\n", PropertyHash, s.Hash())
	files := []File{
		{Path: DependenciesFile, Mode: FileMode, Content: lines(s.Dependencies)},
		{Path: PropertiesFile, Mode: FileMode, Content: props.Bytes()},
	}
	if len(s.Repositories) > 0 {
		files = append(files, File{Path: RepositoriesFile, Mode: FileMode, Content: lines(s.Repositories)})
	}
	return files, nil
}

// HashOf returns the kit hash recorded in the PropertiesFile among files, or "" when
// there is none. It lets an image builder label the image with the hash of its layer.
func HashOf(files []File) string {
	for _, f := range files {
		if path.Clean(f.Path) != PropertiesFile {
			continue
		}
		for line := range strings.Lines(string(f.Content)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), PropertyHash+"="); ok {
				return v
			}
		}
	}
	return ""
}

func validate(s Spec) error {
	if s.RuntimeVersion == "" {
		return fmt.Errorf("kit spec has no runtime version: resolve the platform first")
	}
	if s.RuntimeProvider == "" {
		return fmt.Errorf("kit spec has no runtime provider: resolve the platform first")
	}
	checks := []struct {
		what   string
		values []string
	}{
		{"runtime version", []string{s.RuntimeVersion}},
		{"runtime provider", []string{s.RuntimeProvider}},
		{"dependency", s.Dependencies},
		{"repository", s.Repositories},
	}
	for _, c := range checks {
		for _, v := range c.values {
			if err := writable(v); err != nil {
				return fmt.Errorf("kit %s %q %w", c.what, v, err)
			}
		}
	}
	return nil
}

// writable refuses a value that one line of a kit file cannot hold.
func writable(v string) error {
	if strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return errors.New("contains white space or a control character")
	}
	return nil
}

// lines returns values one a line, each ending with a newline; no value gives no byte.
func lines(values []string) []byte {
	var b bytes.Buffer
	for _, v := range values {
		b.WriteString(v)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
