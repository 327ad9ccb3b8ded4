package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/govapi"
)

// resolveEnvironment finds a declared environment of a control plane in the installations.
func resolveEnvironment(index *envref.Index, list func(ctx context.Context) ([]int64, error)) func(context.Context, envref.Repo, string) (envref.Env, error) {
	return func(ctx context.Context, cp envref.Repo, name string) (envref.Env, error) {
		insts, err := list(ctx)
		if err != nil {
			return envref.Env{}, err
		}
		for _, inst := range insts {
			envs, err := index.Matching(ctx, inst, func(e envref.EnvInfo) bool { return e.Env.ControlPlane == cp && e.Env.Name == name })
			if err != nil {
				return envref.Env{}, err
			}
			if len(envs) > 0 {
				return envs[0].Env, nil
			}
		}
		return envref.Env{}, fmt.Errorf("%s %s: %w", cp, name, govapi.ErrUnknownEnvironment)
	}
}

// runRollback runs `kalypso rollback`: it asks a running app to roll an environment back (or,
// with --release, to release its hold), as the user of a GitHub token.
func runRollback(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var url, cp, env, reason string
	var release, config bool
	fs := newFlagSet("rollback", "--url URL --control-plane OWNER/REPO --environment ENV --reason TEXT [--config | --release]",
		"Pins the previous successfully deployed main commit into an environment, through its pull request\n"+
			"and compliance wait, and holds the environment: no automatic promotion into or out of it until a\n"+
			"release (--release, with a reason). The GitHub user token in GITHUB_TOKEN must have write\n"+
			"permission on the control plane.", stderr)
	fs.StringVar(&url, "url", "", "the app's public URL, e.g. https://kalypso.example.com")
	fs.StringVar(&cp, "control-plane", "", "the control-plane repository, OWNER/REPO")
	fs.StringVar(&env, "environment", "", "the environment")
	fs.StringVar(&reason, "reason", "", "why (recorded in the audit trail)")
	fs.BoolVar(&release, "release", false, "release the environment's hold instead")
	fs.BoolVar(&config, "config", false, "revert the latest config change of the environment branch (a revert commit) instead of pinning the previous deployment")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	token := os.Getenv("GITHUB_TOKEN")
	url = strings.TrimSuffix(url, "/")
	if url == "" || cp == "" || env == "" || reason == "" || token == "" {
		fmt.Fprintln(stderr, "kalypso rollback: --url, --control-plane, --environment, --reason and GITHUB_TOKEN are required")
		return 2
	}
	path := "/api/v1/rollback"
	if release {
		path = "/api/v1/release"
	}
	return postGovernance(ctx, "rollback", url+path, token, govapi.Request{ControlPlane: cp, Environment: env, Reason: reason, Config: config && !release}, stdout, stderr)
}

// postGovernance posts a governance request to a running app as the user of token and
// prints its JSON answer: exit status 0 when the app did it, 1 when it refused or failed,
// 2 for a request that cannot be made.
func postGovernance(ctx context.Context, cmd, url, token string, r govapi.Request, stdout, stderr io.Writer) int {
	body, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "kalypso %s: %v\n", cmd, err)
		return 2
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "kalypso %s: %v\n", cmd, err)
		return 1
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "kalypso %s: %s: %s", cmd, resp.Status, out)
		return 1
	}
	fmt.Fprintf(stdout, "%s", out)
	return 0
}
