package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/govapi"
)

// runOverride runs `kalypso override`: it asks a running app to promote into an environment
// despite its promotion windows, with a reason, as the user of a GitHub token.
func runOverride(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var url, cp, env, commit, reason string
	fs := newFlagSet("override", "--url URL --control-plane OWNER/REPO --env ENV --reason TEXT [--commit SHA]",
		"Promotes a main commit into an environment whose promotion windows hold it, as the Override window\n"+
			"button of its \"Promote to ENV\" check run does, and records why: in the pin's commit message, the\n"+
			"audit trail and the kalypso/window status of the GitOps pull request. Without --commit, the commit\n"+
			"a promotion would pin now (the one the upstream environment pins; main's head for a first\n"+
			"environment). The GitHub user token in GITHUB_TOKEN must have admin permission on the control\n"+
			"plane. Prints the app's JSON answer; exits 1 when the app refuses.", stderr)
	fs.StringVar(&url, "url", "", "the app's public URL, e.g. https://kalypso.example.com")
	fs.StringVar(&cp, "control-plane", "", "the control-plane repository, OWNER/REPO")
	fs.StringVar(&env, "env", "", "the environment")
	fs.StringVar(&env, "environment", "", "the environment (same as --env)")
	fs.StringVar(&commit, "commit", "", "the main commit to promote (default: the one a promotion would pin now)")
	fs.StringVar(&reason, "reason", "", "why the window is overridden (required; recorded)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	token := os.Getenv("GITHUB_TOKEN")
	url = strings.TrimSuffix(url, "/")
	if url == "" || cp == "" || env == "" || strings.TrimSpace(reason) == "" || token == "" {
		fmt.Fprintln(stderr, "kalypso override: --url, --control-plane, --env, --reason and GITHUB_TOKEN are required")
		return 2
	}
	return postGovernance(ctx, "override", url+"/api/v1/override", token,
		govapi.Request{ControlPlane: cp, Environment: env, Commit: commit, Reason: reason}, stdout, stderr)
}
