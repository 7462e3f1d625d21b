#!/usr/bin/env bash
# Runs every Caravan test: unit tests, tests against a real API server, and
# end-to-end tests on the local cluster. The control-plane binaries are
# built into the cache first (about 15 minutes on a cold machine, seconds
# afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

go run ./cmd/caravan local build
go vet ./...
go test -count=1 -timeout 75m "$@" ./...
