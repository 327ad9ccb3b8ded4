// Package config reads the settings of the Kalypso GitHub App.
//
// # Sources
//
// Settings come from three layers, each overriding the previous one:
//
//  1. built-in defaults;
//  2. a YAML file (kalypso serve --config FILE);
//  3. environment variables named KALYPSO_ followed by the key path in upper
//     snake case (github.app.webhookSecret is KALYPSO_GITHUB_APP_WEBHOOK_SECRET).
//     An empty variable counts as unset.
//
// The file is decoded strictly: an unknown key, a value of the wrong type or a
// bad duration is an error reported as FILE:LINE: message. Durations are Go
// durations (30s, 5m, 1h30m); 0 is accepted where zero has a meaning.
// Load then validates everything and reports all problems at once, each naming
// the key and its variable. The app refuses to start without a webhook secret,
// an App ID and a private key.
//
// # Keys
//
//	key                         variable                               default
//	server.address              KALYPSO_SERVER_ADDRESS                 :8080
//	server.managementAddress    KALYPSO_SERVER_MANAGEMENT_ADDRESS      :9090 (never expose it publicly)
//	server.shutdownTimeout      KALYPSO_SERVER_SHUTDOWN_TIMEOUT        30s
//	server.readHeaderTimeout    KALYPSO_SERVER_READ_HEADER_TIMEOUT     10s
//	server.readTimeout          KALYPSO_SERVER_READ_TIMEOUT            30s
//	server.writeTimeout         KALYPSO_SERVER_WRITE_TIMEOUT           1m
//	server.idleTimeout          KALYPSO_SERVER_IDLE_TIMEOUT            1m
//	server.maxHeaderBytes       KALYPSO_SERVER_MAX_HEADER_BYTES        16384
//	server.maxConcurrentBodies  KALYPSO_SERVER_MAX_CONCURRENT_BODIES   8
//	server.maxConnections       KALYPSO_SERVER_MAX_CONNECTIONS         1024
//	github.v3APIURL             KALYPSO_GITHUB_V3_API_URL              https://api.github.com/
//	github.webURL               KALYPSO_GITHUB_WEB_URL                 https://github.com
//	github.graphqlURL           KALYPSO_GITHUB_GRAPHQL_URL             derived from github.v3APIURL
//	github.timeout              KALYPSO_GITHUB_TIMEOUT                 2m
//	github.httpCacheMB          KALYPSO_GITHUB_HTTP_CACHE_MB           4
//	github.app.integrationID    KALYPSO_GITHUB_APP_INTEGRATION_ID      (required)
//	github.app.webhookSecret    KALYPSO_GITHUB_APP_WEBHOOK_SECRET      (required)
//	github.app.privateKey       KALYPSO_GITHUB_APP_PRIVATE_KEY         one of the two key settings
//	github.app.privateKeyFile   KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE    is required
//	controlPlanes               KALYPSO_CONTROL_PLANES                 (none: comma-separated OWNER/REPO globs)
//	cache.dir                   KALYPSO_CACHE_DIR                      "" (in memory)
//	cache.maxBytes              KALYPSO_CACHE_MAX_BYTES                1Gi (0: no limit)
//	sources.maxFileBytes        KALYPSO_SOURCES_MAX_FILE_BYTES         4Mi
//	sources.maxSourceBytes      KALYPSO_SOURCES_MAX_SOURCE_BYTES       16Mi
//	sources.maxSourceFiles      KALYPSO_SOURCES_MAX_SOURCE_FILES       10000
//	sources.loadTimeout         KALYPSO_SOURCES_LOAD_TIMEOUT           30s
//	sources.manifestHosts       KALYPSO_SOURCES_MANIFEST_HOSTS         the host of github.webURL
//	resync.interval             KALYPSO_RESYNC_INTERVAL                10m (0 disables)
//	promotion.pollInterval      KALYPSO_PROMOTION_POLL_INTERVAL        15s
//	promotion.maxClusters       KALYPSO_PROMOTION_MAX_CLUSTERS         10000
//	github.maxCheckRuns         KALYPSO_GITHUB_MAX_CHECK_RUNS          1000
//	github.maxComments          KALYPSO_GITHUB_MAX_COMMENTS            1000
//	github.maxRepositories      KALYPSO_GITHUB_MAX_REPOSITORIES        10000
//	promotion.maxDeployments    KALYPSO_PROMOTION_MAX_DEPLOYMENTS      1000
//	preview.enabled             KALYPSO_PREVIEW_ENABLED                true
//	preview.comment             KALYPSO_PREVIEW_COMMENT                true
//	render.maxAssignmentBytes   KALYPSO_RENDER_MAX_ASSIGNMENT_BYTES    4194304
//	render.maxFunctionBytes     KALYPSO_RENDER_MAX_FUNCTION_BYTES      16777216
//	render.maxListLength        KALYPSO_RENDER_MAX_LIST_LENGTH         10000
//	render.timeout              KALYPSO_RENDER_TIMEOUT                 1m0s
//	fleet.enabled               KALYPSO_FLEET_ENABLED                  false
//	fleet.publicURL             KALYPSO_FLEET_PUBLIC_URL               "" (required when enabled)
//	fleet.clientID              KALYPSO_FLEET_CLIENT_ID                "" (required when enabled)
//	fleet.clientSecret          KALYPSO_FLEET_CLIENT_SECRET            "" (required when enabled)
//	fleet.sessionKey            KALYPSO_FLEET_SESSION_KEY              "" (32 bytes or more when enabled)
//	fleet.sessionTTL            KALYPSO_FLEET_SESSION_TTL              8h
//	fleet.sessionRefresh        KALYPSO_FLEET_SESSION_REFRESH          5m
//	fleet.refreshInterval       KALYPSO_FLEET_REFRESH_INTERVAL         15s (0: read on every request)
//	fleet.badges                KALYPSO_FLEET_BADGES                   false
//	store.driver                KALYPSO_STORE_DRIVER                   sqlite (or postgres)
//	store.path                  KALYPSO_STORE_PATH                     "" (in memory)
//	store.url                   KALYPSO_STORE_URL                      "" (required with postgres)
//	store.retention             KALYPSO_STORE_RETENTION                720h (0: forever)
//	store.replicaName           KALYPSO_STORE_REPLICA_NAME             "" (HOST/PID; the chart: the pod name)
//	reports.secret              KALYPSO_REPORTS_SECRET                 "" (HMAC key of signed reports)
//	reports.bearerToken         KALYPSO_REPORTS_BEARER_TOKEN           "" (Argo CD reports)
//	reports.controlPlanes       KALYPSO_REPORTS_CONTROL_PLANES         none (JSON in the variable)
//	reports.maxAge              KALYPSO_REPORTS_MAX_AGE                5m
//	reports.clockSkew           KALYPSO_REPORTS_CLOCK_SKEW             1m
//	reports.maxBodyBytes        KALYPSO_REPORTS_MAX_BODY_BYTES         256Ki
//	reports.maxConcurrent       KALYPSO_REPORTS_MAX_CONCURRENT         512
//	reports.maxClustersPerEnvironment KALYPSO_REPORTS_MAX_CLUSTERS_PER_ENVIRONMENT 100000
//	reports.retireAfter         KALYPSO_REPORTS_RETIRE_AFTER           168h (0: never)
//	workers                     KALYPSO_WORKERS                        4
//	queueSize                   KALYPSO_QUEUE_SIZE                     1000 (distinct keys of work)
//	handlerTimeout              KALYPSO_HANDLER_TIMEOUT                5m
//	queue.maxAttempts           KALYPSO_QUEUE_MAX_ATTEMPTS             6
//	queue.retryDelay            KALYPSO_QUEUE_RETRY_DELAY              1s (doubling)
//	queue.maxRetryDelay         KALYPSO_QUEUE_MAX_RETRY_DELAY          1m
//	preview.workers             KALYPSO_PREVIEW_WORKERS                1
//	preview.perAuthorPerHour    KALYPSO_PREVIEW_PER_AUTHOR_PER_HOUR    30 (0: no bound)
//	log.level                   KALYPSO_LOG_LEVEL                      info
//	log.format                  KALYPSO_LOG_FORMAT                     json (or console)
//
// Keys returns the same list with a description of each key; docs/configuration.md
// is the user-facing version of this table.
//
// # Example
//
//	server:
//	  address: ":8080"
//	  managementAddress: ":9090"   # /metrics; keep it off the internet
//	  shutdownTimeout: 30s
//	github:
//	  v3APIURL: https://github.example.com/api/v3/   # GitHub Enterprise Server
//	  webURL: https://github.example.com
//	  app:
//	    integrationID: 123456
//	    privateKeyFile: /etc/kalypso/private-key.pem
//	    # webhookSecret comes from KALYPSO_GITHUB_APP_WEBHOOK_SECRET
//	resync:
//	  interval: 10m
//	workers: 4
//	log:
//	  level: info
//	  format: json
//
// # Secrets
//
// The webhook secret and the inline private key have type Secret, which prints
// and marshals as [redacted]; Secret.Value returns the real value. Config.GitHubAppConfig
// builds the equivalent go-githubapp configuration.
package config
