package config

import (
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/ghport"
	"github.com/kalypso-gitops/kalypso/render"
)

// EnvPrefix prefixes every environment variable that overrides a setting.
const EnvPrefix = "KALYPSO_"

// Default values of the settings that have one.
const (
	DefaultAddress             = ":8080"
	DefaultManagementAddress   = ":9090"
	DefaultShutdownTimeout     = 30 * time.Second
	DefaultReadHeaderTimeout   = 10 * time.Second
	DefaultReadTimeout         = 30 * time.Second
	DefaultWriteTimeout        = time.Minute
	DefaultIdleTimeout         = time.Minute
	DefaultMaxHeaderBytes      = 16 << 10
	DefaultMaxConcurrentBodies = 8
	DefaultV3APIURL            = "https://api.github.com/"
	DefaultWebURL              = "https://github.com"
	DefaultGitHubTimeout       = 2 * time.Minute
	DefaultHTTPCacheMB         = 4
	DefaultResyncInterval      = 10 * time.Minute
	DefaultWorkers             = 4
	DefaultQueueSize           = 1000
	DefaultHandlerTimeout      = 5 * time.Minute
	DefaultLogLevel            = "info"
	DefaultLogFormat           = LogFormatJSON
)

// Log formats accepted by log.format.
const (
	LogFormatJSON    = "json"
	LogFormatConsole = "console"
)

// Config is the complete set of settings of the app.
type Config struct {
	Server         Server    `yaml:"server"`         // HTTP listener
	ControlPlanes  []string  `yaml:"controlPlanes"`  // OWNER/REPO patterns of the control-plane repositories
	GitHub         GitHub    `yaml:"github"`         // endpoints, client and App credentials
	Cache          Cache     `yaml:"cache"`          // local git cache
	Sources        Sources   `yaml:"sources"`        // limits on what is read from repositories
	Resync         Resync    `yaml:"resync"`         // periodic full reconciliation
	Promotion      Promotion `yaml:"promotion"`      // promotion across environments
	Preview        Preview   `yaml:"preview"`        // previews of pull requests
	Render         Render    `yaml:"render"`         // bounds of template rendering
	Fleet          Fleet     `yaml:"fleet"`          // fleet view, sign-in and badges
	Store          Store     `yaml:"store"`          // the hub's database
	Reports        Reports   `yaml:"reports"`        // cluster reports endpoint
	Workers        int       `yaml:"workers"`        // workers running queued work
	QueueSize      int       `yaml:"queueSize"`      // distinct keys of work waiting at most
	HandlerTimeout Duration  `yaml:"handlerTimeout"` // time limit of one run of a key
	Queue          Queue     `yaml:"queue"`          // retries of failed work
	Log            Log       `yaml:"log"`            // logging
}

// Server holds the HTTP listener settings.
type Server struct {
	Address             string   `yaml:"address"`             // host:port of the public listener (webhooks)
	ManagementAddress   string   `yaml:"managementAddress"`   // host:port of the management listener (metrics, probes)
	ShutdownTimeout     Duration `yaml:"shutdownTimeout"`     // longest graceful shutdown
	ReadHeaderTimeout   Duration `yaml:"readHeaderTimeout"`   // time allowed to send the request headers
	ReadTimeout         Duration `yaml:"readTimeout"`         // time allowed to send a whole request, body included
	WriteTimeout        Duration `yaml:"writeTimeout"`        // time allowed to answer, from the end of the headers
	IdleTimeout         Duration `yaml:"idleTimeout"`         // time a keep-alive connection may wait for its next request
	MaxHeaderBytes      int      `yaml:"maxHeaderBytes"`      // largest request header block, bytes
	MaxConcurrentBodies int      `yaml:"maxConcurrentBodies"` // webhook bodies read at once
	MaxConnections      int      `yaml:"maxConnections"`      // connections the public listener serves at once
}

// GitHub holds the GitHub endpoints, client settings and App credentials.
type GitHub struct {
	V3APIURL    string           `yaml:"v3APIURL"`    // REST API base URL, with a trailing slash
	WebURL      string           `yaml:"webURL"`      // web URL, without a trailing slash
	GraphQLURL  string           `yaml:"graphqlURL"`  // GraphQL endpoint
	Timeout     Duration         `yaml:"timeout"`     // time limit of one API call with its retries
	HTTPCacheMB int              `yaml:"httpCacheMB"` // ETag cache per installation client, MiB
	App         App              `yaml:"app"`         // App identity and secrets
	GitHubLists `yaml:",inline"` // bounds of the lists read page after page
}

// App holds the GitHub App's identity and secrets.
type App struct {
	IntegrationID  int64  `yaml:"integrationID"`  // App ID
	WebhookSecret  Secret `yaml:"webhookSecret"`  // webhook signing secret
	PrivateKey     Secret `yaml:"privateKey"`     // PEM private key, inline
	PrivateKeyFile string `yaml:"privateKeyFile"` // path of the PEM private key
}

// Cache holds the local git cache settings.
type Cache struct {
	Dir      string   `yaml:"dir"`      // cache directory; "" keeps the cache in memory
	MaxBytes ByteSize `yaml:"maxBytes"` // size above which least recently used repositories are evicted
}

// Promotion holds the settings of promotions across environments.
type Promotion struct {
	PollInterval Duration `yaml:"pollInterval"` // period of compliance polls
	MaxClusters  int      `yaml:"maxClusters"`  // commit statuses read on one commit
	// MaxDeployments bounds the GitHub Deployments read in one search (promotion.maxDeployments).
	MaxDeployments int `yaml:"maxDeployments"`
}

// Preview holds the settings of pull request previews.
type Preview struct {
	Enabled     bool             `yaml:"enabled"` // preview pull requests into control planes and registered workload branches
	Comment     bool             `yaml:"comment"` // keep one comment per pull request summing up its previews
	PreviewLane `yaml:",inline"` // workers and budget of previews
}

// Render holds the bounds of template rendering (see render.Limits).
type Render struct {
	MaxAssignmentBytes int      `yaml:"maxAssignmentBytes"` // output of one assignment, every nested pass
	MaxFunctionBytes   int      `yaml:"maxFunctionBytes"`   // bytes template functions make per assignment
	MaxListLength      int      `yaml:"maxListLength"`      // elements of a list a function makes
	Timeout            Duration `yaml:"timeout"`            // rendering of one environment
}

// Limits returns the settings as the render package's limits.
func (r Render) Limits() render.Limits {
	return render.Limits{
		MaxAssignmentBytes: r.MaxAssignmentBytes,
		MaxFunctionBytes:   r.MaxFunctionBytes,
		MaxListLength:      r.MaxListLength,
		Timeout:            r.Timeout.Std(),
	}
}

// Resync holds the periodic full reconciliation settings.
type Resync struct {
	Interval Duration `yaml:"interval"` // period; 0 disables the periodic run
}

// Log holds the logging settings.
type Log struct {
	Level  string `yaml:"level"`  // trace, debug, info, warn or error
	Format string `yaml:"format"` // json or console
}

// Default returns the settings used when neither the file nor the environment sets a value.
// None depends on the environment any more; the parameter keeps the signature of Load's callers.
func Default(_ func(string) string) *Config {
	return &Config{
		Server: Server{
			Address:             DefaultAddress,
			ManagementAddress:   DefaultManagementAddress,
			ShutdownTimeout:     Duration(DefaultShutdownTimeout),
			ReadHeaderTimeout:   Duration(DefaultReadHeaderTimeout),
			ReadTimeout:         Duration(DefaultReadTimeout),
			WriteTimeout:        Duration(DefaultWriteTimeout),
			IdleTimeout:         Duration(DefaultIdleTimeout),
			MaxHeaderBytes:      DefaultMaxHeaderBytes,
			MaxConcurrentBodies: DefaultMaxConcurrentBodies,
			MaxConnections:      DefaultMaxConnections,
		},
		GitHub: GitHub{
			V3APIURL:    DefaultV3APIURL,
			WebURL:      DefaultWebURL,
			Timeout:     Duration(DefaultGitHubTimeout),
			HTTPCacheMB: DefaultHTTPCacheMB,
			GitHubLists: GitHubLists{MaxCheckRuns: ghport.DefaultMaxCheckRuns, MaxComments: ghport.DefaultMaxComments,
				MaxRepositories: ghport.DefaultMaxRepositories},
		},
		Cache:   Cache{MaxBytes: DefaultCacheMaxBytes},
		Sources: defaultSources(),
		Resync:  Resync{Interval: Duration(DefaultResyncInterval)},
		Promotion: Promotion{PollInterval: Duration(15 * time.Second), MaxClusters: DefaultMaxClusters,
			MaxDeployments: ghport.DefaultMaxDeployments},
		Preview: Preview{Enabled: true, Comment: true, PreviewLane: defaultPreviewLane()},
		Queue:   defaultQueue(),
		Fleet: Fleet{SessionTTL: Duration(DefaultFleetSessionTTL), SessionRefresh: Duration(DefaultFleetSessionRefresh),
			RefreshInterval: Duration(DefaultFleetRefreshInterval)},
		Store:   defaultStore(),
		Reports: defaultReports(),
		Render: Render{
			MaxAssignmentBytes: render.DefaultMaxAssignmentBytes,
			MaxFunctionBytes:   render.DefaultMaxFunctionBytes,
			MaxListLength:      render.DefaultMaxListLength,
			Timeout:            Duration(render.DefaultTimeout),
		},
		Workers:        DefaultWorkers,
		QueueSize:      DefaultQueueSize,
		HandlerTimeout: Duration(DefaultHandlerTimeout),
		Log:            Log{Level: DefaultLogLevel, Format: DefaultLogFormat},
	}
}

// applyDerived normalizes URLs and fills settings whose default depends on other settings.
func (c *Config) applyDerived() {
	if c.GitHub.V3APIURL != "" && !strings.HasSuffix(c.GitHub.V3APIURL, "/") {
		c.GitHub.V3APIURL += "/"
	}
	if c.GitHub.GraphQLURL == "" {
		c.GitHub.GraphQLURL = GraphQLURLFor(c.GitHub.V3APIURL)
	}
	c.GitHub.GraphQLURL = strings.TrimSuffix(c.GitHub.GraphQLURL, "/")
	c.GitHub.WebURL = strings.TrimSuffix(c.GitHub.WebURL, "/")
}

// GraphQLURLFor derives the GraphQL endpoint from a REST v3 API URL:
// https://api.github.com/ gives https://api.github.com/graphql and
// https://HOST/api/v3/ (GitHub Enterprise Server) gives https://HOST/api/graphql.
func GraphQLURLFor(v3APIURL string) string {
	base := strings.TrimSuffix(v3APIURL, "/")
	if trimmed, ok := strings.CutSuffix(base, "/api/v3"); ok {
		return trimmed + "/api/graphql"
	}
	return base + "/graphql"
}
