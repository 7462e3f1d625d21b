#!/usr/bin/env bash
# Shows Caravan's main job on the local cluster: starts the cluster
# (building its binaries on first use), installs Caravan's API, applies a
# Camel K integration and lists it. Stop everything with
# `bin/caravan local down`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Building caravan into bin/"
go build -o bin/caravan ./cmd/caravan

step "Starting the local cluster"
bin/caravan local up

step "Caravan's API on the cluster"
bin/caravan local kubectl -- api-resources --api-group=camel.apache.org

step "Applying a Camel K integration, unchanged"
bin/caravan local kubectl -- apply -f config/samples/camel_v1_integration.yaml
bin/caravan local kubectl -- get integrations -o wide
