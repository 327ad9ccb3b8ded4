# syntax=docker/dockerfile:1

# Build a static binary, the same one `make build` makes: -trimpath, CGO off, and the version,
# commit and date stamped with -ldflags (release/build_test.go checks that the flags agree).
# Kalypso talks to git through go-git, so the image needs no git binary and no C library.
# The build stage runs on the builder's platform and cross-compiles for the target one, so a
# multi-arch build (docker buildx --platform linux/amd64,linux/arm64) needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=devel
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
    -ldflags "-s -w -X github.com/kalypso-gitops/kalypso/internal/version.version=${VERSION} -X github.com/kalypso-gitops/kalypso/internal/version.commit=${COMMIT} -X github.com/kalypso-gitops/kalypso/internal/version.date=${BUILD_DATE}" \
    -o /out/kalypso ./cmd/kalypso

# Distroless static image, running as the unprivileged "nonroot" user.
# The git cache is kept in memory by default (cache.dir empty), so the root file
# system can be read-only; to keep it on disk, set cache.dir (KALYPSO_CACHE_DIR)
# to a writable mounted volume.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=devel
LABEL org.opencontainers.image.title="kalypso" \
      org.opencontainers.image.source="https://github.com/kalypso-gitops/kalypso" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/kalypso /kalypso
USER nonroot
# 8080: webhooks and probes (public). 9090: /metrics and probes (management; keep it internal).
EXPOSE 8080 9090
ENTRYPOINT ["/kalypso"]
CMD ["serve", "--config", "/etc/kalypso/config.yml"]
