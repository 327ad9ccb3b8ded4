# syntax=docker/dockerfile:1

# Build a static binary. Kalypso talks to git through go-git, so the image needs
# no git binary and no C library.
FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags="-s -w" -o /out/kalypso ./cmd/kalypso

# Distroless static image, running as the unprivileged "nonroot" user.
# The git cache is kept in memory by default (cache.dir empty), so the root file
# system can be read-only; to keep it on disk, set cache.dir (KALYPSO_CACHE_DIR)
# to a writable mounted volume.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kalypso /kalypso
USER nonroot
# 8080: webhooks and probes (public). 9090: /metrics and probes (management; keep it internal).
EXPOSE 8080 9090
ENTRYPOINT ["/kalypso"]
CMD ["serve", "--config", "/etc/kalypso/config.yml"]
