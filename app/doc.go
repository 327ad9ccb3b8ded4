// Package app wires the Kalypso GitHub App: configuration, GitHub clients,
// the webhook dispatcher, the HTTP server, metrics, the resync loop and
// graceful shutdown. It holds no business logic: handlers and the resync
// function are supplied by the caller.
//
// # Routes
//
// The public listener (server.address):
//
//	POST /api/github/hook   webhook deliveries (HMAC-SHA256 signature required)
//	GET  /healthz           liveness: 200 "ok"
//	GET  /readyz            readiness: 200 "ready", or 503 "not ready: <reasons>"
//
// The management listener (server.managementAddress; never expose it publicly):
//
//	GET  /healthz, /readyz  as above
//	GET  /metrics           Prometheus text exposition format
//
// A delivery is refused before its body is read when it has no well-formed
// X-Hub-Signature-256 header (400; the SHA-1 X-Hub-Signature is not accepted)
// or no X-GitHub-Event (400), when its Content-Length is over 25 MB (413), or
// when server.maxConcurrentBodies bodies are already being read (503). Its body
// is then read within server.readTimeout into a reusable buffer of its slot and
// its signature checked (400). A valid delivery is answered as soon as it is
// queued: 200 (handled event or ping), 202 (event type without a handler), 503
// (queue full or shutting down). workers goroutines take events from a queue of
// queueSize; each event runs under handlerTimeout with a context detached from
// the HTTP request. Events are not persisted: a lost or refused delivery is
// caught up by the periodic resync. Both listeners apply server.readHeaderTimeout,
// server.readTimeout, server.writeTimeout, server.idleTimeout and server.maxHeaderBytes.
//
// /readyz is 200 once the app has authenticated as the App (a request signed
// with its JWT answered 2xx; Run calls GET /app at start) and its first resync
// has finished, and while fewer than 3 GitHub API requests in a row failed
// (transport error, 5xx or 401) and it is not shutting down; see readiness.go.
//
// # Handlers
//
// Handlers implement githubapp.EventHandler. The context they receive carries
// a zerolog logger with github_delivery_id and github_event_type. Handlers
// must call githubapp.PrepareRepoContext (or githubapp.PreparePRContext) with
// the installation ID and repository of the payload before logging, so that
// their lines also carry github_installation_id, github_repository_owner and
// github_repository_name:
//
//	ctx, logger := githubapp.PrepareRepoContext(ctx, event.GetInstallation().GetID(), event.GetRepo())
//
// The app's own outcome line for each event ("webhook processed" or "webhook
// processing failed") carries all five keys. Installation clients come from
// Server.ClientCreator; git over HTTPS authenticates with user x-access-token
// and the password from Server.InstallationToken, asked again before each fetch
// or push. Never put a token in a URL, an error or a log line; errors logged by
// the app have recent tokens and the webhook secret replaced by [redacted].
//
// # GitHub clients
//
// Installation clients are cached (64 at most) and send "kalypso/<version>" as
// User-Agent. Their middleware, outermost first: retries (package ghretry:
// Retry-After, rate-limit resets, backoff on 5xx for repeatable methods),
// request logging at debug level (method, path, status; never headers),
// go-githubapp's request and rate-limit metrics, and the remaining-requests gauge.
// Responses are revalidated through a size-bounded ETag cache (github.httpCacheMB).
//
// # Metrics
//
//	kalypso_webhooks_received_total{event}           counter
//	kalypso_webhooks_failed_total{event}             counter
//	kalypso_webhooks_rejected_total{reason}          counter (signature, bad_request, too_large, busy, queue_full, shutting_down)
//	kalypso_reconcile_duration_seconds{trigger,outcome}  summary (trigger: webhook, resync)
//	kalypso_github_rate_limit_remaining{resource}    gauge
//	kalypso_github_retries_total{reason}             counter
//	kalypso_github_requests_total                    counter
//	kalypso_github_responses_total{class}            counter (2xx, 3xx, 4xx, 5xx)
//	kalypso_github_responses_cached_total            counter
//	kalypso_github_installation_rate_limit{installation}, kalypso_github_installation_rate_limit_remaining{installation}  gauges
//	kalypso_webhook_queue_length, kalypso_webhook_workers_busy  gauges
//	kalypso_webhook_queue_wait_seconds               summary
//	kalypso_webhook_events_dropped_total             counter
//	kalypso_build_info{version,revision,goversion}   gauge (always 1)
//
// go-githubapp registers its metrics under its own names (github.requests.2xx, github.event.age
// in milliseconds); WritePrometheus renames them, and converts units, from one table
// (metricTable in metricnames.go), where every exported metric has a row with its HELP text.
//
// The event label only takes the event types of the registered handlers (and
// ping); anything else is counted as "other".
//
// # Lifecycle
//
// New logs the first line, "kalypso starting" with the version, commit and build date (and a
// warning when controlPlanes is empty: nothing would be reconciled). Run listens on both
// addresses, authenticates as the App, runs the resync at
// start and then resync.interval after the end of each run (never two at
// once; an error is logged, not fatal), and on context cancellation shuts down
// gracefully within server.shutdownTimeout: /readyz turns 503, the public
// listener closes, the work drains, then the management listener closes.
package app
