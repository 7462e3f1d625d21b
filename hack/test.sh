#!/usr/bin/env bash
# Runs every Caravan test: unit tests, tests against a real API server, and
# end-to-end tests on the local cluster. The control-plane binaries are
# built into the cache first (about 15 minutes on a cold machine, seconds
# afterwards). The tenancy tests that hold on every supported Kubernetes run
# a second time on an API server that serves no MutatingAdmissionPolicy, as
# Kubernetes 1.30 to 1.35 do.
set -euo pipefail
cd "$(dirname "$0")/.."

# As root (CI runs as root), the kubelet node's binaries too.
go run ./cmd/caravan local build
go vet ./...
go test -count=1 -timeout 75m "$@" ./...
CARAVAN_WITHOUT_MUTATING_POLICIES=1 go test -count=1 -timeout 30m "$@" ./test/tenancy \
  -run 'TestAssigningWorkToAnOperatorNeedsTheUseVerb|TestTheAttackMatrix|TestWithoutMutatingPoliciesTheValidatingOnesStillHold|TestAnOperatorsIdentityIsConfinedToItsShare|TestAPipeMovesBetweenConfinedOperators|TestMovesAreCleanInTheAuditLog|TestAnOperatorLimitedToANamespaceNeverServesAnother'
