package main

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitEndpoint records the requests a git client makes to it and answers 404 to all of them.
type gitEndpoint struct {
	*httptest.Server
	mu   sync.Mutex
	auth map[string][]string // request path → Authorization headers received
}

func newGitEndpoint(t *testing.T, tls bool) *gitEndpoint {
	t.Helper()
	e := &gitEndpoint{auth: map[string][]string{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auth[r.URL.Path] = append(e.auth[r.URL.Path], r.Header.Get("Authorization"))
		e.mu.Unlock()
		http.NotFound(w, r)
	})
	if tls {
		e.Server = httptest.NewTLSServer(h)
	} else {
		e.Server = httptest.NewServer(h)
	}
	t.Cleanup(e.Close)
	return e
}

// received returns the Authorization headers of the requests for repository /o/NAME.
func (e *gitEndpoint) received(name string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auth["/o/"+name+"/info/refs"]...)
}

// registrationsRepo is the sample control-plane repository whose dev branch registers one
// workload repository per URL, named r0, r1, ...
func registrationsRepo(t *testing.T, urls ...string) string {
	t.Helper()
	repo, _ := sampleRepo(t)
	gitRun(t, repo, "checkout", "-q", "dev")
	var b strings.Builder
	for i, u := range urls {
		fmt.Fprintf(&b, "---\napiVersion: scheduler.kalypso.io/v1alpha1\nkind: WorkloadRegistration\nmetadata:\n  name: r%d\nspec:\n  workload:\n    repo: %s\n    branch: main\n    path: .\n  workspace: team\n", i, u)
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "registrations.yaml"), []byte(b.String()), 0o644))
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "registrations")
	gitRun(t, repo, "checkout", "-q", "main")
	return repo
}

const testToken = "ghs_secret-token"

var tokenAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+testToken))

// runCLIProcess runs the command line in a process of its own with extra environment variables.
func runCLIProcess(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), runMainVar+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}

// The token reaches the configured GitHub host over HTTPS and nothing else: not another HTTPS
// host, not a plain-HTTP one. Each other host is named once on stderr.
func TestCLISendsTokenOnlyToGitHubOverHTTPS(t *testing.T) {
	github, other, plain := newGitEndpoint(t, true), newGitEndpoint(t, true), newGitEndpoint(t, false)
	repo := registrationsRepo(t, github.URL+"/o/r0", other.URL+"/o/r1", other.URL+"/o/r2", plain.URL+"/o/r3")
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: github.Certificate().Raw}), 0o644))

	code, _, stderr := runCLIProcess(t, []string{"SSL_CERT_FILE=" + certFile, "GITHUB_TOKEN=" + testToken, githubURLVar + "=" + github.URL},
		"validate", "--repo", repo, "--environment", "dev")
	require.Equal(t, 1, code, stderr)
	require.Equal(t, []string{tokenAuth}, github.received("r0"), stderr)
	for _, name := range []string{"r1", "r2"} {
		require.Equal(t, []string{""}, other.received(name), "%s: %s", name, stderr)
	}
	require.Equal(t, []string{""}, plain.received("r3"), stderr)
	require.Equal(t, 1, strings.Count(stderr, "GITHUB_TOKEN is not sent to "+other.URL+" "), stderr)
	require.Equal(t, 1, strings.Count(stderr, "GITHUB_TOKEN is not sent to "+plain.URL+" "), stderr)
	require.NotContains(t, stderr, testToken)
}

// Plain HTTP never gets the token, not even on the configured host; by default the token goes
// to github.com only; a GitHub URL that is not https is a usage error.
func TestCLINeverSendsTokenOverPlainHTTP(t *testing.T) {
	plain := newGitEndpoint(t, false)
	repo := registrationsRepo(t, plain.URL+"/o/r0")
	t.Setenv("GITHUB_TOKEN", testToken)
	host := strings.TrimPrefix(plain.URL, "http://")
	for _, args := range [][]string{{"--github-url", "https://" + host}, nil} {
		code, _, stderr := runCLI(t, append([]string{"validate", "--repo", repo, "--environment", "dev"}, args...)...)
		require.Equal(t, 1, code, stderr)
		require.Contains(t, stderr, "GITHUB_TOKEN is not sent to "+plain.URL+" ")
	}
	require.Equal(t, []string{"", ""}, plain.received("r0"))

	code, _, stderr := runCLI(t, "validate", "--repo", repo, "--environment", "dev", "--github-url", plain.URL)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "flag --github-url")
	require.Empty(t, plain.received("r1"))
}
