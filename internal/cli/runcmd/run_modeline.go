// Copyright The Caravan Authors. Licensed under the Apache License, Version 2.0.

package runcmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/caravan-dev/caravan/internal/modeline"
	"github.com/caravan-dev/caravan/internal/trait"
)

// modelineRefused are run flags a modeline may not set, with the reason: they say how
// the command runs, not what the integration is. kamel refuses dev, wait, logs and sync.
var modelineRefused = map[string]string{
	"wait":    "it says how the command runs; give --wait on the command line",
	"timeout": "it says how the command runs; give --timeout on the command line",
	"dry-run": "it says how the command runs; give --dry-run on the command line",
	"output":  "it says how the command runs; give -o on the command line",
	"help":    "it says how the command runs",
	"dev":     "kamel refuses it in a modeline too",
	"logs":    "kamel refuses it in a modeline too",
	"sync":    "kamel refuses it in a modeline too",
}

// modelineKeyed are the flags of KEY=VALUE entries whose modeline entry is dropped when
// the command line gives the same KEY.
var modelineKeyed = map[string]bool{"property": true, "trait": true, "build-property": true}

// modelineFileValued are the flags whose file:PATH values are relative to the source.
var modelineFileValued = map[string]bool{"property": true, "config": true, "resource": true, "build-property": true}

// entryKey is the KEY of a keyed flag's value: for a -p KEY=VALUE, the key as Java reads the
// property; else the text before the first '=', the whole value when it has none.
func entryKey(flag, value string) string {
	if flag == "property" && strings.Contains(value, "=") && !isPropertySource(value) {
		if key := trait.PropertyKey(value); key != "" {
			return key
		}
	}
	key, _, _ := strings.Cut(value, "=")
	return key
}

// isPropertySource tells whether a -p value names where properties are (file:, configmap:,
// secret:) rather than being one.
func isPropertySource(value string) bool {
	for _, prefix := range []string{"file:", "configmap:", "secret:"} {
		if strings.HasPrefix(value, prefix) {
			return true
		}
	}
	return false
}

// modelineSetting is one flag value that a modeline sets.
type modelineSetting struct {
	flag  *pflag.Flag
	value string
	file  string
	line  int
}

func (s modelineSetting) at() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

// applyModelines sets run's flags from the modelines of the files, as kamel run does,
// before anything else reads the flags.
func (o *RunOptions) applyModelines() error {
	if o.flags == nil {
		return nil
	}
	m := newModelineMerge(o.flags)
	for _, file := range o.Files {
		if _, ok := modeline.StyleOf(file); !ok {
			continue // loadRunFile refuses the file type
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("reading %s: %w", file, err)
		}
		opts, err := modeline.Parse(file, data)
		if err != nil {
			return err
		}
		for _, opt := range opts {
			s, skip, err := o.modelineSetting(file, opt)
			if err != nil {
				return err
			}
			if !skip {
				if err := m.add(s); err != nil {
					return err
				}
			}
		}
	}
	return m.apply(o.ErrOut)
}

// modelineSetting resolves a modeline option to the run flag it sets and its value,
// refusing an option run does not take; skip is true for kamel's "language" marker.
func (o *RunOptions) modelineSetting(file string, opt modeline.Option) (modelineSetting, bool, error) {
	at := fmt.Sprintf("%s:%d", file, opt.Line)
	if opt.Name == "language" {
		return modelineSetting{}, true, nil // a marker for other tools, as kamel skips it
	}
	f := o.flags.Lookup(opt.Name)
	if len(opt.Name) == 1 {
		f = o.flags.ShorthandLookup(opt.Name)
	}
	switch {
	case f == nil:
		return modelineSetting{}, false, fmt.Errorf("%s: modeline option %q is not supported by caravan run "+
			"(see caravan run --help for what it takes)", at, opt.Name)
	case modelineRefused[f.Name] != "":
		return modelineSetting{}, false, fmt.Errorf("%s: modeline option %q is not allowed in a modeline: %s", at, opt.Name, modelineRefused[f.Name])
	case o.localFlags.Lookup(f.Name) == nil && f.Name != "namespace":
		return modelineSetting{}, false, fmt.Errorf("%s: modeline option %q is not allowed in a modeline: "+
			"how to reach the cluster is given on the command line", at, opt.Name)
	}
	value := opt.Value
	if value == "" {
		if f.NoOptDefVal == "" {
			return modelineSetting{}, false, fmt.Errorf("%s: modeline option %q needs a value: %s=VALUE", at, opt.Name, opt.Name)
		}
		value = f.NoOptDefVal
	}
	value, err := modeline.ExpandEnv(value, os.LookupEnv)
	if err != nil {
		return modelineSetting{}, false, fmt.Errorf("%s: modeline option %s: %w", at, opt, err)
	}
	if modelineFileValued[f.Name] {
		value = relativeToSource(value, file)
	}
	return modelineSetting{flag: f, value: value, file: file, line: opt.Line}, false, nil
}

// relativeToSource makes the path of a file:PATH value relative to the source's directory.
func relativeToSource(value, source string) string {
	path, ok := strings.CutPrefix(value, "file:")
	if !ok || filepath.IsAbs(path) {
		return value
	}
	return "file:" + filepath.Join(filepath.Dir(source), path)
}

// modelineMerge gathers the settings of every modeline and decides which apply.
type modelineMerge struct {
	flags *pflag.FlagSet
	// cliKeys holds, for each keyed flag, the KEYs the command line gives.
	cliKeys map[string]map[string]bool
	// present holds, for each list flag, the values it holds so far.
	present map[string]map[string]bool
	// scalars holds the single-valued flags that a modeline sets, by flag name.
	scalars map[string]modelineSetting
	// settings are what apply, in order; notes what does not, and why.
	settings []modelineSetting
	notes    []string
}

func newModelineMerge(flags *pflag.FlagSet) *modelineMerge {
	m := &modelineMerge{flags: flags, cliKeys: map[string]map[string]bool{}, present: map[string]map[string]bool{},
		scalars: map[string]modelineSetting{}}
	flags.VisitAll(func(f *pflag.Flag) {
		values, isList := f.Value.(pflag.SliceValue)
		if !isList {
			return
		}
		m.present[f.Name], m.cliKeys[f.Name] = map[string]bool{}, map[string]bool{}
		for _, v := range values.GetSlice() {
			m.present[f.Name][v] = true
			m.cliKeys[f.Name][entryKey(f.Name, v)] = true
		}
	})
	return m
}

// add takes one setting. List values are appended after the command line's, unless
// repeated or, for a keyed flag, the command line gives the KEY. A single value applies
// unless the command line sets the flag, and two modelines may not set it differently.
func (m *modelineMerge) add(s modelineSetting) error {
	name := s.flag.Name
	if present, isList := m.present[name]; isList {
		key := entryKey(name, s.value)
		switch {
		case present[s.value]:
		case modelineKeyed[name] && m.cliKeys[name][key]:
			m.notes = append(m.notes, fmt.Sprintf("%s: modeline %s=%s skipped: the command line sets %s", s.at(), name, s.value, key))
		default:
			present[s.value] = true
			m.settings = append(m.settings, s)
		}
		return nil
	}
	if prev, ok := m.scalars[name]; ok {
		if prev.value != s.value {
			return fmt.Errorf("%s: modeline %s=%s conflicts with %s=%s at %s", s.at(), name, s.value, name, prev.value, prev.at())
		}
		return nil
	}
	m.scalars[name] = s
	if s.flag.Changed {
		m.notes = append(m.notes, fmt.Sprintf("%s: modeline %s=%s skipped: the command line sets --%s", s.at(), name, s.value, name))
		return nil
	}
	m.settings = append(m.settings, s)
	return nil
}

// apply sets the flags and says on errOut, for each file, which options it applied.
func (m *modelineMerge) apply(errOut io.Writer) error {
	applied := map[string][]string{}
	var files []string
	for _, s := range m.settings {
		if err := m.flags.Set(s.flag.Name, s.value); err != nil {
			return fmt.Errorf("%s: modeline %s=%s: %w", s.at(), s.flag.Name, s.value, err)
		}
		if _, seen := applied[s.file]; !seen {
			files = append(files, s.file)
		}
		value := s.value
		if strings.ContainsAny(value, " \t'\"") {
			value = strconv.Quote(value)
		}
		applied[s.file] = append(applied[s.file], fmt.Sprintf("--%s=%s", s.flag.Name, value))
	}
	if errOut == nil {
		return nil
	}
	for _, f := range files {
		fmt.Fprintf(errOut, "%s: modeline options %s\n", f, strings.Join(applied[f], " "))
	}
	for _, n := range m.notes {
		fmt.Fprintln(errOut, n)
	}
	return nil
}
