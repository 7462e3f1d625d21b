#!/usr/bin/env bash
# Looks for flaky tests: runs the packages whose tests start a control
# plane (./test/... and the internal packages whose tests use
# test/harness) N times, each time as a separate `go test -count=1`, then
# once more with -race, and prints which tests failed in which run. It
# exits non-zero if any run failed. The output of each run is kept in the
# directory it names at the start.
#
#   hack/flake.sh [N]    # N defaults to 5
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: hack/flake.sh [N]   (N runs, then one with -race)" >&2
  exit 2
fi

go run ./cmd/caravan local build || exit 1

harness=github.com/caravan-dev/caravan/test/harness
mapfile -t pkgs < <(
  go list ./test/...
  go list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./internal/... ./cmd/... |
    awk -v h="$harness" '{ for (i = 2; i <= NF; i++) if ($i == h) { print $1; break } }'
)
if [ "${#pkgs[@]}" -eq 0 ]; then
  echo "no packages found" >&2
  exit 1
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/caravan-flake.XXXXXX")
echo "packages: ${pkgs[*]}"
echo "logs: $logs"

# failures reads the plain output of go test and prints one line per
# failed test, "<package> <test>", or "<package> (package)" when a package
# failed without a failed test (a build error, TestMain, a timeout).
failures() {
  awk '
    /^ *--- FAIL: / { pending[++n] = $3; next }
    /^FAIL\t/ {
      if (n == 0) print $2, "(package)"
      for (i = 1; i <= n; i++) print $2, pending[i]
      n = 0; next
    }
    /^ok  \t/ { n = 0 }
  ' "$1"
}

names=()
for i in $(seq 1 "$runs") race; do
  names+=("$i")
  flags=(-count=1 -timeout 75m)
  [ "$i" = race ] && flags+=(-race)
  start=$SECONDS
  go test "${flags[@]}" "${pkgs[@]}" >"$logs/run-$i.log" 2>&1
  status=$?
  failures "$logs/run-$i.log" >"$logs/run-$i.failed"
  if [ "$status" -ne 0 ] && [ ! -s "$logs/run-$i.failed" ]; then
    echo "(go test exited $status, see run-$i.log)" >"$logs/run-$i.failed"
  fi
  if [ "$status" -eq 0 ]; then result=ok; else result=FAIL; fi
  printf 'run %s: %s in %ds\n' "$i" "$result" $((SECONDS - start))
done

echo
if ! cat "$logs"/run-*.failed | grep -q .; then
  echo "no failures in $runs runs + race"
  exit 0
fi

# A table: a row per failed test, a column per run.
{
  printf 'TEST'
  for i in "${names[@]}"; do printf '\t%s' "$i"; done
  echo
  cat "$logs"/run-*.failed | sort -u | while IFS= read -r test; do
    printf '%s' "${test#github.com/caravan-dev/caravan/}"
    for i in "${names[@]}"; do
      if grep -qxF -- "$test" "$logs/run-$i.failed"; then printf '\tFAIL'; else printf '\t.'; fi
    done
    echo
  done
} | column -t -s $'\t'
exit 1
