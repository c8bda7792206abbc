# Tasks for git-atlas. Plain go and git; nothing here needs a release service.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -s -w -X github.com/git-atlas/git-atlas/internal/cli.Version=$(VERSION)
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST      := dist

.PHONY: build install test test-sweeps lint docs bench release clean

build:
	CGO_ENABLED=0 $(GO) build -buildvcs=true -trimpath -o git-atlas ./cmd/git-atlas

install:
	CGO_ENABLED=0 $(GO) install -buildvcs=true -trimpath ./cmd/git-atlas

test:
	$(GO) test -race -timeout 20m ./...

test-sweeps:
	$(GO) test -tags sweeps -count=1 -timeout 25m -run "^($$(grep -v '^#' .ci/sweeps | paste -sd '|'))\$$" ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	golangci-lint run ./...   # v2.15.0, as .ci/run installs it

docs:
	$(GO) test ./internal/cli -run TestReferenceUpToDate -update-docs

bench:
	bash bench/issue14.sh

release:
	rm -rf $(DIST) && mkdir -p $(DIST)
	for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" \
			-o $(DIST)/git-atlas-$(VERSION)-$$os-$$arch ./cmd/git-atlas || exit 1; \
	done
	cd $(DIST) && sha256sum git-atlas-* > SHA256SUMS

clean:
	rm -rf $(DIST) git-atlas
