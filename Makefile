# Caravan's everyday commands. The README's two commands are hack/demo.sh
# and hack/test.sh; these targets are shortcuts.

.PHONY: help demo test flake generate catalog build

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

demo: ## Start the local cluster and show Caravan on it
	./hack/demo.sh

test: ## Run every test (builds the cluster binaries on first use)
	./hack/test.sh

flake: ## Run the control-plane tests N times and once with -race (make flake N=10)
	./hack/flake.sh $(N)

generate: ## Regenerate deepcopy code, CRDs, the operator's RBAC, the packagings' generated files and the architecture diagram
	go tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
	go tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	go tool controller-gen rbac:roleName=caravan-operator 'paths=./internal/operator/...;./internal/controller/...' output:rbac:artifacts:config=config/rbac
	go run ./hack/packaging
	cd hack/diagram && go run . ../../docs/architecture.dot ../../docs/architecture.svg

catalog: ## Regenerate internal/catalog/catalog.json from Camel's catalog (needs mvn and a Maven repository; run when Camel's version changes)
	go run ./hack/catalog

build: ## Build bin/caravan, and bin/kubectl-caravan and its completion helper bin/kubectl_complete-caravan to use it as a kubectl plugin
	go build -o bin/caravan ./cmd/caravan
	ln -sf caravan bin/kubectl-caravan
	ln -sf caravan bin/kubectl_complete-caravan
