// Package observecmd holds the commands that read what runs: get, describe, logs, dump,
// operators and version.
package observecmd
