#!/usr/bin/env bash
# Fuzzes every parser of user input for a while each (default 30s; ./hack/fuzz.sh 5m, or a
# count of executions, ./hack/fuzz.sh 3000x, as CI does):
# the trait trees and the sources and flows (through rendering), run's trait flags, properties files, bind's
# endpoints, operator ids, dependencies (read, then written into a kit layer) and Kamelet property
# values. A failing input is kept under the package's testdata/fuzz, where `go test`
# replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
time="${1:-30s}"
for target in \
  "./internal/render FuzzTraitsThatParseRender" \
  "./internal/render FuzzSourcesAndFlowsRender" \
  "./internal/trait FuzzFromFlags" \
  "./internal/trait FuzzParseProperties" \
  "./internal/cli/runcmd FuzzParseEndpoint" \
  "./internal/ownership FuzzValidateID" \
  "./internal/runtime FuzzParseDependency" \
  "./internal/kit FuzzAcceptedDependenciesLayOut" \
  "./internal/kamelet FuzzResolveProperties"; do
  set -- $target
  echo "==> $2 ($1), $time"
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$time" "$1"
done
