#!/usr/bin/env bash
# Runs every Caravan test: unit tests, tests against a real API server, and
# end-to-end tests on the local cluster. The control-plane binaries are
# built into the cache first (about 15 minutes on a cold machine, seconds
# afterwards). As root, the end-to-end tests run their pods on a real
# kubelet (the kubelet node), the other suites on the process node. The
# tenancy tests that hold on every supported Kubernetes run a second time on
# an API server that serves no MutatingAdmissionPolicy, as Kubernetes 1.30
# to 1.35 do.
set -euo pipefail
cd "$(dirname "$0")/.."

# As root (CI runs as root), the kubelet node's binaries too.
go run ./cmd/caravan local build
go vet ./...
# test/node runs after the others: it and the end-to-end tests each need the machine's one
# kubelet node as root, and a package waiting for its turn would hold one of go test's slots.
go test -count=1 -timeout 75m "$@" $(go list ./... | grep -v '/test/node$')
go test -count=1 -timeout 30m "$@" ./test/node
CARAVAN_WITHOUT_MUTATING_POLICIES=1 go test -count=1 -timeout 30m "$@" ./test/tenancy \
  -run 'TestAssigningWorkToAnOperatorNeedsTheUseVerb|TestTheAttackMatrix|TestWithoutMutatingPoliciesTheValidatingOnesStillHold|TestAnOperatorsIdentityIsConfinedToItsShare|TestAPipeMovesBetweenConfinedOperators|TestMovesAreCleanInTheAuditLog|TestAnOperatorLimitedToANamespaceNeverServesAnother'
