package metrics

import "time"

// The process's memory, split as a platform team needs to size an
// operator. Resident memory counts every page of the binary it touched,
// pages which every process mapping the same file (the other operator
// pods of one image on a node) shares.
const (
	// AnonymousMemory is the process's own memory (heap, stacks, runtime),
	// backed by no file: what each more operator adds.
	AnonymousMemory = "caravan_process_anonymous_memory_bytes"
	// ProportionalMemory is the resident memory with each shared page
	// divided among the processes that map it (Linux's PSS).
	ProportionalMemory = "caravan_process_proportional_memory_bytes"
)

// pssEvery is how often the collector reads the PSS again. Reading
// smaps_rollup walks the process's page tables, the most expensive part
// of a scrape (a scrape every second of thirty operators spent a tenth of
// their CPU in it).
const pssEvery = 30 * time.Second
