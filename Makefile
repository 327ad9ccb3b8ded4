# Kalypso — make targets. `make test` runs every test; `make demo` runs the app on the sample.
GO ?= go
export GOTOOLCHAIN := local

.PHONY: all build test e2e demo bench vet fmt fuzz

all: build

build: ## build the kalypso binary into ./bin
	$(GO) build -trimpath -o bin/kalypso ./cmd/kalypso

test: vet ## run every test (unit, conformance, end to end), then the fuzz targets for a bounded time
	$(GO) test -count=1 -timeout 15m ./...
	$(MAKE) fuzz

FUZZTIME ?= 10s

fuzz: ## fuzz the control-plane object decoder for FUZZTIME (crashers are kept in scheduling/testdata/fuzz)
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./scheduling

e2e: ## run only the end-to-end scenarios against the GitHub simulator
	$(GO) test -count=1 -timeout 10m -run 'E2E' ./...

demo: ## run the demo on the built-in sample control plane
	$(GO) run ./cmd/kalypso demo

bench: ## measure the 100 × 1,000 fleet (100,000 assignments)
	$(GO) run ./cmd/kalypso bench --cluster-types 100 --workloads 100 --targets-per-workload 10 --configs 5

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
