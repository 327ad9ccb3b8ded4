package gitsource

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseGitHubURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://github.com":              "https://github.com",
		"https://GHE.example.com:8443/":   "https://GHE.example.com:8443",
		" https://github.example.com/   ": "https://github.example.com",
	} {
		u, err := ParseGitHubURL(raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, u.String())
	}
	for _, raw := range []string{"http://github.com", "github.com", "https://user:pw@github.com", "https://github.com/org", "https://github.com?x=1", "ssh://github.com"} {
		_, err := ParseGitHubURL(raw)
		require.ErrorIs(t, err, ErrGitHubURL, raw)
	}
}

// The token goes to the GitHub host over https only (the default port written or not, the host
// in any case); other hosts, other ports and http get no credentials; other schemes are refused.
func TestClonerAuth(t *testing.T) {
	github, err := ParseGitHubURL("https://github.example.com")
	require.NoError(t, err)
	var notice bytes.Buffer
	c := NewCloner("tok", github, &notice)
	for repo, wantToken := range map[string]bool{
		"https://github.example.com/o/r":      true,
		"https://GitHub.Example.com:443/o/r":  true,
		"https://github.example.com:8443/o/r": false,
		"http://github.example.com/o/r":       false,
		"https://github.com/o/r":              false,
		"https://github.example.com.evil/o/r": false,
	} {
		auth, err := c.auth(repo)
		require.NoError(t, err, repo)
		require.Equal(t, wantToken, auth != nil, repo)
	}
	for _, repo := range []string{"file:///etc", "ssh://git@github.example.com/o/r", "git@github.example.com:o/r", "/tmp/repo"} {
		_, err := c.auth(repo)
		require.ErrorIs(t, err, ErrRepoScheme, repo)
	}
	require.Equal(t, 4, bytes.Count(notice.Bytes(), []byte("\n")), notice.String())
	_, err = NewCloner("", github, &notice).auth("http://other/o/r")
	require.NoError(t, err)
	require.NotContains(t, notice.String(), "http://other")
}
