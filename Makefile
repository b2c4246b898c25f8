# Quire's interface: run, test, build, synth, deploy, bench, soak, lint.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GROUPS := $(notdir $(wildcard functions/*))
BOOTSTRAPS := $(GROUPS:%=build/%/bootstrap)
DDB_LOCAL := .cache/dynamodb-local/Loopback.class
DOCS_ASSETS := $(addprefix internal/swaggerui/assets/,swagger-ui-bundle.js.gz swagger-ui-standalone-preset.js.gz swagger-ui.css.gz)
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
# -trimpath: what the go command builds does not depend on the folder it is
# built in, so that a clone elsewhere (a CI checkout, another worktree)
# finds its packages and golangci-lint's results in the caches.
export GOFLAGS := -buildvcs=false -trimpath
# A target whose recipe fails is deleted, not left half made.
.DELETE_ON_ERROR:

.PHONY: help run test build synth deploy destroy smoke bench soak fuzz lint deps clean contract client

# The pinned tools: none is a dependency of the module, nor linked into a
# function. Each is built once, by the Go of the day, into
# .cache/bin/<Go version>/<name>@<version> (tool gives the path), which a
# new version of either builds anew; the tests run oasdiff from there when
# it is built, and with go run when it is not.
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
OASDIFF := github.com/oasdiff/oasdiff@v1.37.0
OAPI_CODEGEN := github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2
TOOLS := $(GOLANGCI_LINT) $(ACTIONLINT) $(OASDIFF) $(OAPI_CODEGEN)
GO_VERSION := $(shell go env GOVERSION)
tool = .cache/bin/$(GO_VERSION)/$(notdir $(1))

# GO_LINK links a main package into the file its last argument names. go
# run keeps what it links in Go's build cache, where go build -o links it
# again every time: a new clone (CI's checkout) copies the tools and the
# bootstraps that another clone linked from the same sources, and make run
# and the end-to-end tests the local server as it was last linked. cp -f
# replaces a file that is running (a make run in another terminal), which
# a plain cp cannot open.
GO_LINK := go run -exec 'cp -f'

.cache/bin/$(GO_VERSION)/%:
	@mkdir -p $(@D)
	$(GO_LINK) $(filter %/$*,$(TOOLS)) $@.tmp
	@mv $@.tmp $@

help: ## list the targets
	@grep -E '^[a-z0-9]+:.*## ' $(firstword $(MAKEFILE_LIST)) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

deps: node_modules/.installed $(DDB_LOCAL) $(DOCS_ASSETS) ## install npm packages, DynamoDB Local, Go modules, curl and jq
	@go mod download
	@scripts/apt-install.sh curl jq

# The CDK CLI ships Go templates; a go.mod makes node_modules a module of its
# own, so that ./... patterns leave it out.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	echo 'module ignore' > node_modules/go.mod
	touch $@

# Swagger UI's files, from the swagger-ui-dist package-lock.json pins (its
# tarball alone: make run needs no other npm package), built into the health
# function for its docs page (GET /docs).
SWAGGER_UI := .cache/swagger-ui-dist/package
$(SWAGGER_UI)/package.json: package-lock.json scripts/fetch-swagger-ui.sh
	scripts/fetch-swagger-ui.sh
	@touch $@

internal/swaggerui/assets/%.gz: $(SWAGGER_UI)/package.json
	gzip -9nc $(SWAGGER_UI)/$* > $@

$(DDB_LOCAL): scripts/install-dynamodb-local.sh internal/testing/ddblocal/Loopback.java
	scripts/install-dynamodb-local.sh

# make run installs only what it serves with: DynamoDB Local and Swagger
# UI's files (the Go modules come with the build), and curl and jq for the
# README's examples.
run: $(DDB_LOCAL) $(DOCS_ASSETS) build/quire-local ## serve the whole API on PORT (default 8080) with DynamoDB Local
	@scripts/apt-install.sh curl jq
	@build/quire-local

# The local server of make run and the end-to-end tests, linked again on
# every make (from Go's build cache when nothing changed).
build/quire-local: FORCE
	@mkdir -p $(@D)
	@$(GO_LINK) ./cmd/local $@

build: $(BOOTSTRAPS) ## build every function's bootstrap for Lambda (linux/arm64)

# A bootstrap is built again when what it is built from changes: a Go or
# embedded file of a package of this module it links, or the folder of one
# (a file added or removed), go.mod, go.sum, this Makefile, or the Go
# version. Each build lists those files in build/<group>/bootstrap.d (a
# bootstrap without its list is built again), and the bootstrap and its
# list take the time the build began, so that a file changed while it ran
# is newer.
BOOTSTRAP_ENV := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
BOOTSTRAP_FILES := {{if and .Module .Module.Main}}{{.Dir}}{{range .GoFiles}} {{$$.Dir}}/{{.}}{{end}}{{range .SFiles}} {{$$.Dir}}/{{.}}{{end}}{{range .EmbedFiles}} {{$$.Dir}}/{{.}}{{end}}{{end}}

build/%/bootstrap: build/%/bootstrap.d $(DOCS_ASSETS) go.mod go.sum Makefile build/go-version
	@mkdir -p $(@D)
	@touch $@.began
	$(BOOTSTRAP_ENV) $(GO_LINK) -tags lambda.norpc -trimpath -ldflags='-s -w' ./functions/$* $@
	@files=$$($(BOOTSTRAP_ENV) go list -tags lambda.norpc -deps -f '$(BOOTSTRAP_FILES)' ./functions/$*) && \
	  files=$$(for f in $$files; do echo "$$f"; [[ -d "$$f" ]] || dirname "$$f"; done | sort -u) && \
	  { echo "$@:" $$files; for f in $$files; do echo "$$f:"; done; } > $@.d
	@touch -r $@.began $@ $@.d && rm $@.began

build/%/bootstrap.d: ;

-include $(BOOTSTRAPS:=.d)

# build/go-version names the Go that builds the bootstraps; it changes only
# when that does.
build/go-version: FORCE
	@mkdir -p $(@D)
	@[[ "$$(cat $@ 2>/dev/null)" == "$(GO_VERSION)" ]] || echo "$(GO_VERSION)" > $@

FORCE:

synth: deps build ## synthesize the CloudFormation template into cdk.out (offline)
	npx cdk synth --quiet

STAGE ?=
deploy: deps build ## deploy the stage STAGE (the stack Quire-STAGE) to the current AWS account (CDK_ARGS: more cdk options)
	npx cdk deploy $(if $(STAGE),-c quire:stage=$(STAGE)) --outputs-file build/outputs-$(or $(STAGE),default).json $(CDK_ARGS)

destroy: development-stage deps build ## delete the development stage STAGE, tables included (refused for a production stage)
	npx cdk destroy --force -c quire:stage=$(STAGE) $(CDK_ARGS)

# development-stage refuses, before anything is built, any stage the app
# would treat as production: the rule of kindOf and kindOfName in
# infra/stages.go, which TestDestroyRefusesProduction (infra/stages_test.go)
# holds to this one. quire:stageKind decides when CDK_ARGS gives it, or
# else cdk.json's context (CDK_ARGS first, as the CDK reads them; a
# production in CDK_ARGS always refuses); without it, only the names of
# DEVELOPMENT_STAGES are development. Context set elsewhere (cdk.context.json,
# ~/.cdk.json) is not read here: a production stack's termination
# protection is the backstop. CDK_ARGS may not name the stage: STAGE does.
DEVELOPMENT_STAGES := dev|development|test|dev-*|test-*|pr-*
.PHONY: development-stage
development-stage:
	@refuse() { echo "make destroy: refused for STAGE=$(STAGE): $$1 (see docs/deploying.md#stages)" >&2; exit 1; }; \
	case "$(CDK_ARGS)" in *quire:stage=*) refuse "name the stage with STAGE, not quire:stage in CDK_ARGS";; esac; \
	case "$(CDK_ARGS)" in \
	  *quire:stageKind=production*) kind=production;; \
	  *quire:stageKind=*) kind=$$(echo "$(CDK_ARGS)" | grep -o 'quire:stageKind=[^ ]*' | tail -n 1 | cut -d= -f2);; \
	  *) kind=$$( { grep -o '"quire:stageKind" *: *"[^"]*"' cdk.json 2>/dev/null || true; } | tail -n 1 | cut -d'"' -f4);; \
	esac; \
	case "$$kind" in \
	  development) ;; \
	  "") case "$(STAGE)" in $(DEVELOPMENT_STAGES)) ;; *) refuse "a production stage by its name";; esac;; \
	  *) refuse "quire:stageKind=$$kind";; \
	esac

# make test prints what it cost at its end, wall time and CPU-seconds
# (scripts/cost.sh), whether it passed or not: every minute of it is paid on
# every change.
test: ## lint, unit, integration (DynamoDB Local), infra, events, template lint and end to end; then its wall time and CPU-seconds
	@scripts/cost.sh "make test" $(MAKE) --no-print-directory checks

# checks builds the bootstraps, while npm installs its packages, and lints
# once node_modules is a module of its own (above). Then it runs the Go
# tests alone (beside anything else, two cores are too few for the
# contention tests' deadlines), every answer and event they collect held
# to the documents by ajv as well as kin-openapi (QUIRE_REQUIRE_NODE),
# against two DynamoDB Local servers warmed
# once for every test binary (cmd/ddblocal); their binaries are linked
# without the symbol table and DWARF (-s -w), which no test reads, in less
# time. Then the synthesized templates' checks run beside the end-to-end
# tests (two at a time, or as make -j says), each one's output printed
# whole when it ends.
.PHONY: checks
checks: deps build $(call tool,$(OASDIFF)) $(call tool,$(OAPI_CODEGEN)) $(call tool,$(GOLANGCI_LINT)) $(call tool,$(ACTIONLINT))
	$(MAKE) --no-print-directory lint
	QUIRE_REQUIRE_DYNAMODB_LOCAL=1 QUIRE_REQUIRE_NODE=1 go run ./cmd/ddblocal go test -count=1 -ldflags='-s -w' ./...
	$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j2) --output-sync=target template-lint e2e

.PHONY: template-lint
template-lint: deps build
	npx cdk synth --quiet
	scripts/lint-template.sh

.PHONY: e2e
e2e: deps build/quire-local ## the generated TypeScript client and the browser tests (headless Chromium) against the local server
	scripts/install-chromium.sh
	node e2e/run.mjs

# The URL of the stage STAGE that make deploy wrote, when BASE_URL is not given.
BASE_URL ?= $(if $(STAGE),$(shell node -p 'Object.values(require("./build/outputs-$(STAGE).json"))[0].ApiUrl' 2>/dev/null))
smoke: deps ## run the smoke suite against BASE_URL, or the stage STAGE make deploy deployed (SMOKE_ADMIN_EMAIL, SMOKE_ADMIN_PASSWORD: to fund its payment)
	node e2e/run.mjs --smoke "$(BASE_URL)"

bench: deps ## measure bootstraps, init time, cold requests and DynamoDB requests per route
	go run ./cmd/bench

SOAK_ARGS ?=
soak: deps ## send mixed traffic through DynamoDB faults and check invariants (SOAK_ARGS: -requests, -clients, -profile, -seed...)
	go run ./cmd/bench/soak $(SOAK_ARGS)

contract: $(call tool,$(OASDIFF)) ## commit a change to a version's OpenAPI document that breaks no client (contracts/v<N>.json; CORRECTION=1: a rule on requests the server applied already; SECURITY=1: a security fix; CLARIFICATION=1: what answers were all along, said so more tools read it alike)
	go test -count=1 ./internal/openapi -run '^TestReleasedContracts$$' -update $(if $(CORRECTION),-correction) $(if $(SECURITY),-security) $(if $(CLARIFICATION),-clarification)

client: $(call tool,$(OAPI_CODEGEN)) ## regenerate the Go client, client/quire.gen.go, from version 2's contract (after make contract)
	cd client && ../$(call tool,$(OAPI_CODEGEN)) -config oapi-codegen.yaml ../contracts/v2.json > quire.gen.go.tmp
	mv client/quire.gen.go.tmp client/quire.gen.go

FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME each
	@for pkg in $$(go list ./...); do \
	  for f in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "$$pkg $$f"; go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# golangci-lint runs .golangci.yml's linters: errcheck, govet, ineffassign,
# staticcheck and unused, each exclusion there with its reason.
lint: $(call tool,$(GOLANGCI_LINT)) $(call tool,$(ACTIONLINT)) ## gofmt, golangci-lint (errcheck, govet, ineffassign, staticcheck, unused), a tidy go.mod, and actionlint on the workflows
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(call tool,$(GOLANGCI_LINT)) run ./...
	go mod tidy -diff
	$(call tool,$(ACTIONLINT))

clean: ## remove build output
	rm -rf build cdk.out
