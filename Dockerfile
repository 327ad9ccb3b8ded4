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
# The local git cache defaults to /tmp/kalypso-cache (cache.dir); mount a volume
# there, or set KALYPSO_CACHE_DIR, when the root file system is read-only.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kalypso /kalypso
USER nonroot
# 8080: webhooks and probes (public). 9090: /metrics and probes (management; keep it internal).
EXPOSE 8080 9090
ENTRYPOINT ["/kalypso"]
CMD ["serve", "--config", "/etc/kalypso/config.yml"]
