package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// DefaultGitHubURL is the GitHub the token is sent to unless another one is configured.
const DefaultGitHubURL = "https://github.com"

// ErrGitHubURL is returned for a GitHub URL that credentials cannot safely be sent to.
var ErrGitHubURL = errors.New("the GitHub URL must be https://HOST[:PORT] without user, query or fragment")

// ErrRepoScheme is returned for a registered repository URL that is not http or https.
var ErrRepoScheme = errors.New("only https:// (and anonymous http://) repository URLs are cloned")

// ParseGitHubURL checks the URL of the GitHub (github.com or a GitHub Enterprise Server) that
// credentials may be sent to: it must use https and name only a host and an optional port.
func ParseGitHubURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%q: %w: %w", raw, ErrGitHubURL, err)
	}
	if !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.User != nil || u.RawQuery != "" ||
		u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return nil, fmt.Errorf("%q: %w", raw, ErrGitHubURL)
	}
	return &url.URL{Scheme: "https", Host: u.Host}, nil
}

// Cloner reads registered workload repositories by cloning their branch into memory. Its token
// goes only to the configured GitHub host over HTTPS; every other repository is read anonymously.
type Cloner struct {
	token  string
	github *url.URL
	notice io.Writer
	told   map[string]bool
}

// NewCloner returns a Cloner that authenticates with token (when not empty) to the GitHub at
// github (see ParseGitHubURL) and tells notice, once per host, which hosts it reads anonymously.
func NewCloner(token string, github *url.URL, notice io.Writer) *Cloner {
	return &Cloner{token: token, github: github, notice: notice, told: map[string]bool{}}
}

// Workload implements scheduling.WorkloadSource.
func (c *Cloner) Workload(spec scheduling.ManifestsSpec) (scheduling.Source, error) {
	auth, err := c.auth(spec.Repo)
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("clone %s: %w", spec.Repo, err)
	}
	opts := &git.CloneOptions{
		URL:           spec.Repo,
		Auth:          auth,
		ReferenceName: plumbing.NewBranchReferenceName(spec.Branch),
		SingleBranch:  true,
		Depth:         1,
	}
	repo, err := git.CloneContext(context.Background(), memory.NewStorage(), nil, opts)
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("clone %s branch %s: %w", spec.Repo, spec.Branch, err)
	}
	head, err := repo.Head()
	if err != nil {
		return scheduling.Source{}, fmt.Errorf("clone %s branch %s: %w", spec.Repo, spec.Branch, err)
	}
	fsys, err := TreeFS(repo, head.Hash())
	if err != nil {
		return scheduling.Source{}, err
	}
	return scheduling.Source{FS: fsys, Name: spec.Repo, Prefix: spec.Repo + "@" + spec.Branch + ":", Commit: head.Hash().String()}, nil
}

// auth returns the credentials for a repository URL: the token for the GitHub host over
// HTTPS, none for anything else (said once per host).
func (c *Cloner) auth(repo string) (transport.AuthMethod, error) {
	u, err := url.Parse(strings.TrimSpace(repo))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRepoScheme, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "https" && scheme != "http") || u.Host == "" {
		return nil, ErrRepoScheme
	}
	if c.token == "" {
		return nil, nil
	}
	if scheme == "https" && sameHost(u, c.github) {
		return &http.BasicAuth{Username: "x-access-token", Password: c.token}, nil
	}
	c.tell(scheme, u)
	return nil, nil
}

func (c *Cloner) tell(scheme string, u *url.URL) {
	origin := scheme + "://" + strings.ToLower(u.Host)
	if c.told[origin] || c.notice == nil {
		return
	}
	c.told[origin] = true
	why := "not the GitHub host " + c.github.String() + " (--github-url)"
	if scheme == "http" {
		why = "plain HTTP"
	}
	fmt.Fprintf(c.notice, "kalypso: GITHUB_TOKEN is not sent to %s (%s): its repositories are read anonymously\n", origin, why)
}

// sameHost reports whether u names github's host and port (443 when not given).
func sameHost(u, github *url.URL) bool {
	return strings.EqualFold(u.Hostname(), github.Hostname()) && httpsPort(u) == httpsPort(github)
}

func httpsPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return "443"
}
