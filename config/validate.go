package config

import (
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/kalypso-gitops/kalypso/render"
)

// ValidationError lists every problem found in a configuration.
type ValidationError struct {
	Source   string   // configuration file, if any
	Problems []string // one message per problem, naming the key and its variable
}

// Error joins the problems, one per line.
func (e *ValidationError) Error() string {
	from := ""
	if e.Source != "" {
		from = " (" + e.Source + ")"
	}
	return fmt.Sprintf("invalid configuration%s:\n  - %s", from, strings.Join(e.Problems, "\n  - "))
}

// Validate checks every setting and reports all problems at once.
func (c *Config) Validate() error {
	if p := c.problems(); len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// problems collects the problems of all sections.
func (c *Config) problems() []string {
	var p []string
	p = append(p, c.appProblems()...)
	p = append(p, c.githubProblems()...)
	p = append(p, c.runtimeProblems()...)
	p = append(p, c.tenancyProblems()...)
	p = append(p, c.fleetProblems()...)
	p = append(p, c.listenerProblems()...)
	p = append(p, c.statusProblems()...)
	p = append(p, c.listProblems()...)
	p = append(p, c.storeProblems()...)
	p = append(p, c.reportsProblems()...)
	return p
}

// appProblems checks the App identity and secrets.
func (c *Config) appProblems() []string {
	var p []string
	a := c.GitHub.App
	if a.WebhookSecret == "" {
		p = append(p, named("github.app.webhookSecret")+" is required: the secret GitHub signs webhook deliveries with (unsigned deliveries are never accepted)")
	}
	if a.IntegrationID <= 0 {
		p = append(p, named("github.app.integrationID")+" is required: the GitHub App's ID (a positive integer)")
	}
	return append(p, c.keyProblems()...)
}

// keyProblems checks that exactly one usable private key source is set.
func (c *Config) keyProblems() []string {
	a := c.GitHub.App
	switch {
	case a.PrivateKey == "" && a.PrivateKeyFile == "":
		return []string{"one of " + named("github.app.privateKey") + " and " + named("github.app.privateKeyFile") + " is required"}
	case a.PrivateKey != "" && a.PrivateKeyFile != "":
		return []string{"set only one of " + named("github.app.privateKey") + " and " + named("github.app.privateKeyFile")}
	case a.PrivateKey != "":
		if block, _ := pem.Decode([]byte(a.PrivateKey.Value())); block == nil {
			return []string{named("github.app.privateKey") + " is not a PEM-encoded key"}
		}
	default:
		if _, err := os.Stat(a.PrivateKeyFile); err != nil {
			return []string{fmt.Sprintf("%s: %v", named("github.app.privateKeyFile"), err)}
		}
	}
	return nil
}

// githubProblems checks the GitHub endpoints and client settings.
func (c *Config) githubProblems() []string {
	var p []string
	for path, v := range map[string]string{
		"github.v3APIURL":   c.GitHub.V3APIURL,
		"github.webURL":     c.GitHub.WebURL,
		"github.graphqlURL": c.GitHub.GraphQLURL,
	} {
		if err := checkURL(v); err != nil {
			p = append(p, fmt.Sprintf("%s: %v", named(path), err))
		}
	}
	slices.Sort(p)
	p = appendIf(p, c.GitHub.Timeout <= 0, "github.timeout", "must be positive")
	return appendIf(p, c.GitHub.HTTPCacheMB < 0, "github.httpCacheMB", "must not be negative")
}

// runtimeProblems checks the server, workers, cache and log settings.
func (c *Config) runtimeProblems() []string {
	var p []string
	p = appendIf(p, c.Server.Address == "", "server.address", "must not be empty")
	p = append(p, c.serverProblems()...)
	p = appendIf(p, c.Promotion.PollInterval <= 0, "promotion.pollInterval", "must be positive")
	p = appendIf(p, c.Resync.Interval < 0, "resync.interval", "must not be negative (0 disables the periodic resync)")
	p = append(p, c.renderProblems()...)
	p = append(p, c.queueProblems()...)
	p = appendIf(p, !validLogLevel(c.Log.Level), "log.level",
		fmt.Sprintf("%q is not one of %s", c.Log.Level, logLevelList))
	return appendIf(p, c.Log.Format != LogFormatJSON && c.Log.Format != LogFormatConsole, "log.format",
		fmt.Sprintf("%q is not one of json, console", c.Log.Format))
}

// serverProblems checks the listeners, their timeouts and limits.
func (c *Config) serverProblems() []string {
	var p []string
	sv := c.Server
	p = appendIf(p, sv.ManagementAddress == "", "server.managementAddress", "must not be empty")
	p = appendIf(p, sv.ManagementAddress != "" && sv.ManagementAddress == sv.Address && !strings.HasSuffix(sv.Address, ":0"),
		"server.managementAddress", "must differ from "+named("server.address")+": /metrics must not be served on the public listener")
	p = appendIf(p, sv.ShutdownTimeout <= 0, "server.shutdownTimeout", "must be positive")
	p = appendIf(p, sv.ReadHeaderTimeout <= 0, "server.readHeaderTimeout", "must be positive")
	p = appendIf(p, sv.ReadTimeout <= 0, "server.readTimeout", "must be positive")
	p = appendIf(p, sv.ReadHeaderTimeout > sv.ReadTimeout && sv.ReadTimeout > 0, "server.readHeaderTimeout",
		"must not exceed "+named("server.readTimeout"))
	p = appendIf(p, sv.WriteTimeout < sv.ReadTimeout || sv.WriteTimeout <= 0, "server.writeTimeout",
		"must be positive and at least "+named("server.readTimeout")+": it runs from the end of the headers, while the body is still read")
	p = appendIf(p, sv.IdleTimeout <= 0, "server.idleTimeout", "must be positive")
	p = appendIf(p, sv.MaxHeaderBytes < 4096, "server.maxHeaderBytes", "must be at least 4096")
	return appendIf(p, sv.MaxConcurrentBodies < 1, "server.maxConcurrentBodies", "must be at least 1")
}

// renderProblems checks the rendering limits.
func (c *Config) renderProblems() []string {
	var p []string
	p = appendIf(p, c.Render.MaxAssignmentBytes < 1, render.SettingMaxAssignmentBytes, "must be at least 1")
	p = appendIf(p, c.Render.MaxFunctionBytes < 1, render.SettingMaxFunctionBytes, "must be at least 1")
	p = appendIf(p, c.Render.MaxListLength < 1, render.SettingMaxListLength, "must be at least 1")
	return appendIf(p, c.Render.Timeout <= 0, render.SettingTimeout, "must be positive")
}

// logLevelList names the accepted values of log.level.
const logLevelList = "trace, debug, info, warn, error"

// validLogLevel reports whether l is an accepted log.level.
func validLogLevel(l string) bool {
	switch l {
	case "trace", "debug", "info", "warn", "error":
		return true
	}
	return false
}

// appendIf adds a problem about path when bad is true.
func appendIf(p []string, bad bool, path, msg string) []string {
	if bad {
		return append(p, named(path)+" "+msg)
	}
	return p
}

// named formats a key with its environment variable.
func named(path string) string {
	return fmt.Sprintf("%s (%s)", path, envFor(path))
}

// envFor returns the environment variable of a key path.
func envFor(path string) string {
	for _, k := range Keys() {
		if k.Path == path {
			return k.Env
		}
	}
	return EnvName(path)
}

// checkURL accepts absolute http and https URLs.
func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("invalid URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", v)
	}
	return nil
}
