# Kalypso — make targets. `make test` runs every test; `make demo` runs the app on the sample.
GO ?= go
export GOTOOLCHAIN := local

.PHONY: all build test e2e demo bench vet fmt tools browser shells deploy-check release-check chart-package docs fuzz cover race

# What the binary reports as `kalypso version`: git describe of the checkout (the tag, or the tag
# and the commits since it, or the commit; -dirty with local changes), the commit and the date.
# The Dockerfile and .goreleaser.yaml pass the same flags (release/ checks that they agree).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/kalypso-gitops/kalypso/internal/version
LDFLAGS := -s -w -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).date=$(BUILD_DATE)
BIN ?= bin/kalypso

# apt-get runs as root; elsewhere (a CI runner) through sudo.
SUDO ?= $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Pinned tools for the deployment checks (deploy/), built from source with the Go
# toolchain into bin/tools once; a version change installs the new version.
TOOLS_DIR := $(CURDIR)/bin/tools
HELM_VERSION := v3.22.0
KUSTOMIZE_VERSION := v5.8.2
GORELEASER_VERSION := v2.15.1
ACTIONLINT_VERSION := v1.7.12
HELM_STAMP := $(TOOLS_DIR)/.helm-$(HELM_VERSION)
KUSTOMIZE_STAMP := $(TOOLS_DIR)/.kustomize-$(KUSTOMIZE_VERSION)
GORELEASER_STAMP := $(TOOLS_DIR)/.goreleaser-$(GORELEASER_VERSION)
ACTIONLINT_STAMP := $(TOOLS_DIR)/.actionlint-$(ACTIONLINT_VERSION)
export KALYPSO_TEST_HELM := $(TOOLS_DIR)/helm
export KALYPSO_TEST_KUSTOMIZE := $(TOOLS_DIR)/kustomize
export KALYPSO_TEST_GORELEASER := $(TOOLS_DIR)/goreleaser
export KALYPSO_TEST_ACTIONLINT := $(TOOLS_DIR)/actionlint

all: build

build: ## build the kalypso binary into ./bin, stamped with VERSION, COMMIT and BUILD_DATE
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kalypso

test: vet tools browser shells ## run every test (unit, conformance, end to end, Helm chart and kustomize base, release configuration), the orchestration under the race detector, then the fuzz targets for a bounded time
	@echo "==> running tests (unit, conformance, end to end, deployment and release checks)"
	$(GO) test -count=1 -timeout 15m ./...
	$(MAKE) race
	$(MAKE) fuzz

# The packages that run concurrent work, and the replicas end-to-end tests against a binary
# built with the race detector (a data race there fails the test that met it).
RACE_PKGS := ./app/... ./handlers/... ./internal/reconcile/... ./internal/promote/... ./internal/envref/... \
	./internal/gitcache/... ./internal/workq/... ./internal/coord/...

race: ## run the orchestration packages and the replicas end-to-end tests under the race detector
	@echo "==> running the orchestration packages and the replicas end-to-end tests under the race detector"
	$(GO) test -race -count=1 -timeout 10m $(RACE_PKGS)
	KALYPSO_E2E_RACE=1 $(GO) test -count=1 -timeout 10m -run 'TestE2EReplicas' ./e2e

FUZZTIME ?= 10s

fuzz: ## fuzz the object decoder and the workload-value checks for FUZZTIME each (findings are kept in scheduling/testdata/fuzz and render/testdata/fuzz)
	@echo "==> fuzzing the object decoder and the workload-value checks for $(FUZZTIME) each"
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./scheduling
	$(GO) test -run '^$$' -fuzz '^FuzzWorkloadValues$$' -fuzztime $(FUZZTIME) ./render

e2e: ## run only the end-to-end scenarios against the GitHub simulator
	@echo "==> running the end-to-end scenarios"
	$(GO) test -count=1 -timeout 10m -run 'E2E' ./...

# The orchestration packages, tested against the GitHub fake and in-memory repositories.
COVER_PKGS := ./internal/reconcile ./internal/promote ./handlers

cover: ## print the line coverage of the orchestration packages
	$(GO) test -count=1 -cover $(COVER_PKGS)

demo: ## run the demo on the built-in sample control plane
	$(GO) run ./cmd/kalypso demo

bench: ## measure the 100 × 1,000 fleet (100,000 assignments)
	$(GO) run ./cmd/kalypso bench --cluster-types 100 --workloads 100 --targets-per-workload 10 --configs 5

tools: $(HELM_STAMP) $(KUSTOMIZE_STAMP) $(GORELEASER_STAMP) $(ACTIONLINT_STAMP) ## install helm, kustomize, goreleaser and actionlint (pinned) into bin/tools

# Headless Chromium for the fleet view's browser test (e2e/browser_test.go), from Debian.
CHROMIUM ?= /usr/bin/chromium
export KALYPSO_TEST_CHROMIUM := $(CHROMIUM)

browser: $(CHROMIUM) ## install Debian's chromium for the browser test (needs apt-get and root)

$(CHROMIUM):
	@echo "==> installing Debian's chromium for the browser test (first run only)"
	$(SUDO) apt-get update
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-dejavu-core

# zsh and fish for the tests of `kalypso completion` (bash is there already), shellcheck for
# actionlint to check the workflows' scripts.
shells: ## install zsh, fish and shellcheck from Debian or Ubuntu (needs apt-get)
	@command -v zsh >/dev/null && command -v fish >/dev/null && command -v shellcheck >/dev/null || echo "==> installing zsh, fish and shellcheck for the completion and workflow tests (first run only)"
	@command -v zsh >/dev/null && command -v fish >/dev/null && command -v shellcheck >/dev/null || { $(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends zsh fish shellcheck; }

$(HELM_STAMP):
	@echo "==> building pinned helm $(HELM_VERSION) (first run only, several minutes)"
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) CGO_ENABLED=0 $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	@rm -f $(TOOLS_DIR)/.helm-*
	@touch $@

$(KUSTOMIZE_STAMP):
	@echo "==> building pinned kustomize $(KUSTOMIZE_VERSION) (first run only, a few minutes)"
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) CGO_ENABLED=0 $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	@rm -f $(TOOLS_DIR)/.kustomize-*
	@touch $@

$(GORELEASER_STAMP):
	@echo "==> building pinned goreleaser $(GORELEASER_VERSION) (first run only, several minutes)"
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) CGO_ENABLED=0 $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	@rm -f $(TOOLS_DIR)/.goreleaser-*
	@touch $@

$(ACTIONLINT_STAMP):
	@echo "==> building pinned actionlint $(ACTIONLINT_VERSION) (first run only)"
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) CGO_ENABLED=0 $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	@rm -f $(TOOLS_DIR)/.actionlint-*
	@touch $@

deploy-check: tools ## lint and render the Helm chart and the kustomize base, decode every object strictly
	$(GO) test -count=1 ./deploy/...

release-check: tools ## goreleaser check, actionlint on the workflows, and the build flags of make, Dockerfile and GoReleaser
	$(GO) test -count=1 ./release/...

# The chart as the release publishes it: version VERSION without its leading v, appVersion (the
# image tag the chart deploys by default) VERSION itself.
CHART_OUT ?= dist/chart
chart-package: $(HELM_STAMP) ## package the Helm chart for VERSION into CHART_OUT
	$(KALYPSO_TEST_HELM) package deploy/helm/kalypso --version $(patsubst v%,%,$(VERSION)) --app-version $(VERSION) --destination $(CHART_OUT)

docs: ## regenerate docs/reference.md from the Go types of package scheduling
	$(GO) generate ./scheduling

vet:
	@echo "==> go vet"
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
