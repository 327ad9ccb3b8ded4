package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/syncbuf"
)

// demoSections splits the demo's output at its act headers: index 0 is what comes before act 1.
func demoSections(t *testing.T, stdout string) []string {
	t.Helper()
	parts := regexp.MustCompile(`\n=== Act \d: [^\n]* ===\n`).Split(stdout, -1)
	require.Len(t, parts, len(demoActs())+1, stdout)
	return parts
}

func TestDemoRunsTheAppAgainstTheSimulator(t *testing.T) {
	code, stdout, stderr := runCLI(t, "demo")
	require.Equal(t, 0, code, stderr)
	acts := demoSections(t, stdout)
	checkChangesAct(t, acts[1])
	checkPromotionAct(t, acts[2])
	checkPreviewAct(t, acts[3])
	checkFleetAct(t, acts[4])
	checkHubAct(t, acts[5])
	require.Contains(t, stdout, "Run `kalypso demo --serve`")
}

func checkChangesAct(t *testing.T, act string) {
	t.Helper()
	require.Contains(t, act, "#1 Kalypso: update dev from microsoft/kalypso-control-plane (kalypso/dev → dev")
	require.Contains(t, act, "#2 Kalypso: update stage from microsoft/kalypso-control-plane (kalypso/stage → stage")
	require.Contains(t, act, "| large | observability-prometheus | 1 | 2 | 1 |")
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-control-plane@[0-9a-f]{7}: success`, act)
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-svc-src@[0-9a-f]{7}: success`, act)
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-control-plane@[0-9a-f]{7}: failure — 2 errors in dev`, act)
	require.Contains(t, act, `cluster-types/west-us/large/large-cluster-type.yaml:10: ClusterType "large": spec: unknown field "namespaceServise"`)
	require.NotContains(t, act, "#3 ", "one pull request per environment")

	// Each step says what it changed in the pull request, and step 3 why changes left it.
	steps := strings.SplitN(act, "\n1. ", 2)[1]
	step1, rest, _ := strings.Cut(steps, "\n2. ")
	step2, rest, _ := strings.Cut(rest, "\n3. ")
	step3, step4, _ := strings.Cut(rest, "\n4. ")
	require.Regexp(t, `~ large/observability-prometheus/platform-config\.yaml\n.*ENVIRONMENT: Dev\s+→\s+ENVIRONMENT: Development`, step1)
	require.NotContains(t, step1, "reconciler.yaml")
	require.Regexp(t, `~ large/observability-prometheus/reconciler\.yaml\n.*path: "./prometheus"\s+→\s+path: "./prometheus-v2"`, step2)
	require.NotContains(t, step2, "platform-config.yaml")
	require.Contains(t, step3, "No longer proposed (back to their merged content): large/observability-prometheus/")
	require.Contains(t, step3, "Why: a broken ClusterType holds back what depends on it.")
	require.Regexp(t, `check run "Kalypso / dev" on microsoft/kalypso-control-plane@[0-9a-f]{7}: success`, step4)
	require.Contains(t, step4, "Proposed again: large/observability-prometheus/")
}

func checkPromotionAct(t *testing.T, act string) {
	t.Helper()
	main := regexp.MustCompile(`main ([0-9a-f]{7}) is valid in every environment`).FindStringSubmatch(act)
	require.NotNil(t, main, act)
	sha := main[1]
	for _, want := range []string{
		"status kalypso/dev on main " + sha + ": pending — waiting for the GitOps pull request to be merged",
		"now proposes main " + sha + ", labelled promoted.",
		"status kalypso/dev on main " + sha + ": pending — 0/1 clusters compliant",
		"status kalypso/dev on main " + sha + ": success — deployed to 1 cluster",
		`check run "Promote to stage" on main ` + sha + ": Waiting for approval to promote to stage, with the buttons [Promote]",
		`check run "Promote to stage": Promoted by @platform-lead; buttons left: 0`,
		"status kalypso/stage on main " + sha + ": pending — waiting for the GitOps pull request to be merged",
	} {
		require.Contains(t, act, want)
	}
	require.Regexp(t, `pull request #\d+ \(kalypso/stage\) proposes it to stage, labelled promoted`, act)
}

func checkPreviewAct(t *testing.T, act string) {
	t.Helper()
	step1, rest, _ := strings.Cut(act, "\n2. ")
	step2, rest, _ := strings.Cut(rest, "\n3. ")
	step3, step4, _ := strings.Cut(rest, "\n4. ")
	require.Regexp(t, `check run "Kalypso preview / dev" on [0-9a-f]{7}: failure — dev: blast radius over the guard's limit`, step1)
	require.Contains(t, step1, "the change removes 1 of 1 assignments (100.0%), more than maxRemoved 50%")
	require.Contains(t, step1, "**Counts and names only:**")
	require.Contains(t, step1, "buttons: [Accept Show full preview]")
	require.Contains(t, step1, "| dev | ❌")
	require.Contains(t, step2, "**Refused:** @alice cannot accept: it needs write permission")
	require.Contains(t, step3, "**Full preview approved** by @platform-lead at ")
	require.Contains(t, step3, "large/observability-prometheus", "the full preview names the files")
	require.NotContains(t, step3, "**Counts and names only:**")
	require.Regexp(t, `check run "Kalypso preview / dev" on [0-9a-f]{7}: success — `, step4)
	require.Contains(t, step4, "**Blast radius accepted** by @platform-lead at ")
	require.NotContains(t, step4, "buttons:")
}

func checkFleetAct(t *testing.T, act string) {
	t.Helper()
	require.Contains(t, act, `/fleet serves the page "Kalypso fleet"`)
	require.Regexp(t, `dev +pins main [0-9a-f]{7}; promotion deployed \(deployed to 1 cluster\)`, act)
	require.Regexp(t, `stage +pins main [0-9a-f]{7}; promotion awaiting-merge`, act)
	require.Regexp(t, `deployment of [0-9a-f]{7}: success`, act)
}

// kalypso demo --serve plays the acts, then serves the fleet page with its demo sign-in until
// interrupted, and stops cleanly.
func TestDemoServeKeepsTheFleetPageUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"demo", "--serve"}, &stdout, &stderr) }()
	signIn := regexp.MustCompile(`Demo sign-in: (\S+)`)
	require.Eventually(t, func() bool { return signIn.MatchString(stdout.String()) }, 3*time.Minute, 50*time.Millisecond,
		"the demo prints its sign-in link: %s%s", stdout.String(), stderr.String())
	demoSections(t, stdout.String())
	fleetURL := regexp.MustCompile(`Fleet page: +(\S+)`).FindStringSubmatch(stdout.String())[1]

	anonymous := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := anonymous.Get(fleetURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "the page needs a sign-in")

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err = browser.Get(signIn.FindStringSubmatch(stdout.String())[1])
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, fleetURL, resp.Request.URL.String(), "the sign-in ends on the fleet page")
	require.Contains(t, string(page), "microsoft/kalypso-control-plane")
	require.Contains(t, string(page), "platform-lead")

	select {
	case code := <-done:
		t.Fatalf("the demo ended by itself (%d) although --serve was given", code)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("the demo did not stop when interrupted")
	}
	require.Contains(t, stdout.String(), "Stopped.")
}
