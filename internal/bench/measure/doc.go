// Package measure takes the bench's figures from a running cluster. It
// watches objects to learn the moment each one is ready, reads the API
// server's audit log for who wrote what, the CPU of processes from /proc,
// the operators' metrics (through internal/metrics) and CPU profiles
// (sorted by kind of work), and turns what it read into percentiles,
// curves and per-integration figures. It starts nothing: the bench's
// scenarios decide what runs and call it to measure.
package measure
