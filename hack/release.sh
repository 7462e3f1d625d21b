#!/usr/bin/env bash
# Builds and publishes a version of Caravan: hack/release.sh VERSION REGISTRY[/REPOSITORY].
# See `hack/release.sh -h` and docs/releasing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)/release"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./hack/release
"$bin" "$@"
