package config

import (
	"path/filepath"
	"strings"
	"time"
)

// EnvPrefix prefixes every environment variable that overrides a setting.
const EnvPrefix = "KALYPSO_"

// Default values of the settings that have one.
const (
	DefaultAddress         = ":8080"
	DefaultShutdownTimeout = 30 * time.Second
	DefaultV3APIURL        = "https://api.github.com/"
	DefaultWebURL          = "https://github.com"
	DefaultGitHubTimeout   = 2 * time.Minute
	DefaultHTTPCacheMB     = 4
	DefaultResyncInterval  = 10 * time.Minute
	DefaultWorkers         = 4
	DefaultQueueSize       = 100
	DefaultHandlerTimeout  = 5 * time.Minute
	DefaultLogLevel        = "info"
	DefaultLogFormat       = LogFormatJSON
	cacheDirName           = "kalypso-cache"
)

// Log formats accepted by log.format.
const (
	LogFormatJSON    = "json"
	LogFormatConsole = "console"
)

// Config is the complete set of settings of the app.
type Config struct {
	Server         Server   `yaml:"server"`
	GitHub         GitHub   `yaml:"github"`
	Cache          Cache    `yaml:"cache"`
	Resync         Resync   `yaml:"resync"`
	Workers        int      `yaml:"workers"`
	QueueSize      int      `yaml:"queueSize"`
	HandlerTimeout Duration `yaml:"handlerTimeout"`
	Log            Log      `yaml:"log"`
}

// Server holds the HTTP listener settings.
type Server struct {
	Address         string   `yaml:"address"`
	ShutdownTimeout Duration `yaml:"shutdownTimeout"`
}

// GitHub holds the GitHub endpoints, client settings and App credentials.
type GitHub struct {
	V3APIURL    string   `yaml:"v3APIURL"`
	WebURL      string   `yaml:"webURL"`
	GraphQLURL  string   `yaml:"graphqlURL"`
	Timeout     Duration `yaml:"timeout"`
	HTTPCacheMB int      `yaml:"httpCacheMB"`
	App         App      `yaml:"app"`
}

// App holds the GitHub App's identity and secrets.
type App struct {
	IntegrationID  int64  `yaml:"integrationID"`
	WebhookSecret  Secret `yaml:"webhookSecret"`
	PrivateKey     Secret `yaml:"privateKey"`
	PrivateKeyFile string `yaml:"privateKeyFile"`
}

// Cache holds the local git cache settings.
type Cache struct {
	Dir string `yaml:"dir"`
}

// Resync holds the periodic full reconciliation settings.
type Resync struct {
	Interval Duration `yaml:"interval"`
}

// Log holds the logging settings.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Default returns the settings used when neither the file nor the environment sets a value.
func Default(env func(string) string) *Config {
	return &Config{
		Server: Server{Address: DefaultAddress, ShutdownTimeout: Duration(DefaultShutdownTimeout)},
		GitHub: GitHub{
			V3APIURL:    DefaultV3APIURL,
			WebURL:      DefaultWebURL,
			Timeout:     Duration(DefaultGitHubTimeout),
			HTTPCacheMB: DefaultHTTPCacheMB,
		},
		Cache:          Cache{Dir: filepath.Join(tempDir(env), cacheDirName)},
		Resync:         Resync{Interval: Duration(DefaultResyncInterval)},
		Workers:        DefaultWorkers,
		QueueSize:      DefaultQueueSize,
		HandlerTimeout: Duration(DefaultHandlerTimeout),
		Log:            Log{Level: DefaultLogLevel, Format: DefaultLogFormat},
	}
}

// tempDir is $TMPDIR from env, or /tmp.
func tempDir(env func(string) string) string {
	if dir := env("TMPDIR"); dir != "" {
		return dir
	}
	return "/tmp"
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
