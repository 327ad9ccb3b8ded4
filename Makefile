# Kalypso — make targets. `make test` runs every test; `make demo` runs the app on the sample.
GO ?= go
export GOTOOLCHAIN := local

.PHONY: all build test e2e demo bench vet fmt tools browser deploy-check fuzz cover race

# Pinned tools for the deployment checks (deploy/), built from source with the Go
# toolchain into bin/tools once; a version change installs the new version.
TOOLS_DIR := $(CURDIR)/bin/tools
HELM_VERSION := v3.22.0
KUSTOMIZE_VERSION := v5.8.2
HELM_STAMP := $(TOOLS_DIR)/.helm-$(HELM_VERSION)
KUSTOMIZE_STAMP := $(TOOLS_DIR)/.kustomize-$(KUSTOMIZE_VERSION)
export KALYPSO_TEST_HELM := $(TOOLS_DIR)/helm
export KALYPSO_TEST_KUSTOMIZE := $(TOOLS_DIR)/kustomize

all: build

build: ## build the kalypso binary into ./bin
	$(GO) build -trimpath -o bin/kalypso ./cmd/kalypso

test: vet tools browser ## run every test (unit, conformance, end to end, Helm chart and kustomize base), the orchestration under the race detector, then the fuzz targets for a bounded time
	$(GO) test -count=1 -timeout 15m ./...
	$(MAKE) race
	$(MAKE) fuzz

# The packages that run concurrent work, and the replicas end-to-end tests against a binary
# built with the race detector (a data race there fails the test that met it).
RACE_PKGS := ./app/... ./handlers/... ./internal/reconcile/... ./internal/promote/... ./internal/envref/... \
	./internal/gitcache/... ./internal/workq/... ./internal/coord/...

race: ## run the orchestration packages and the replicas end-to-end tests under the race detector
	$(GO) test -race -count=1 -timeout 10m $(RACE_PKGS)
	KALYPSO_E2E_RACE=1 $(GO) test -count=1 -timeout 10m -run 'TestE2EReplicas' ./e2e

FUZZTIME ?= 10s

fuzz: ## fuzz the object decoder and the workload-value checks for FUZZTIME each (findings are kept in scheduling/testdata/fuzz)
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./scheduling
	$(GO) test -run '^$$' -fuzz '^FuzzWorkloadValues$$' -fuzztime $(FUZZTIME) ./scheduling

e2e: ## run only the end-to-end scenarios against the GitHub simulator
	$(GO) test -count=1 -timeout 10m -run 'E2E' ./...

# The orchestration packages, tested against the GitHub fake and in-memory repositories.
COVER_PKGS := ./internal/reconcile ./internal/promote ./handlers

cover: ## print the line coverage of the orchestration packages
	$(GO) test -count=1 -cover $(COVER_PKGS)

demo: ## run the demo on the built-in sample control plane
	$(GO) run ./cmd/kalypso demo

bench: ## measure the 100 × 1,000 fleet (100,000 assignments)
	$(GO) run ./cmd/kalypso bench --cluster-types 100 --workloads 100 --targets-per-workload 10 --configs 5

tools: $(HELM_STAMP) $(KUSTOMIZE_STAMP) ## install helm and kustomize (pinned) into bin/tools

# Headless Chromium for the fleet view's browser test (e2e/browser_test.go), from Debian.
CHROMIUM ?= /usr/bin/chromium
export KALYPSO_TEST_CHROMIUM := $(CHROMIUM)

browser: $(CHROMIUM) ## install Debian's chromium for the browser test (needs apt-get and root)

$(CHROMIUM):
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-dejavu-core

$(HELM_STAMP):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) CGO_ENABLED=0 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	@rm -f $(TOOLS_DIR)/.helm-*
	@touch $@

$(KUSTOMIZE_STAMP):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) CGO_ENABLED=0 $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	@rm -f $(TOOLS_DIR)/.kustomize-*
	@touch $@

deploy-check: tools ## lint and render the Helm chart and the kustomize base, decode every object strictly
	$(GO) test -count=1 ./deploy/...

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
