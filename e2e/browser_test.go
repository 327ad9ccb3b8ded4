package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// chromium returns Debian's chromium, installed by `make browser`. In CI (CI set) a missing
// browser fails the test; elsewhere the test is skipped, saying how to install it.
func chromium(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KALYPSO_TEST_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("chromium not found at %s: run `make browser`, which installs Debian's chromium (`make test` does it first), or set KALYPSO_TEST_CHROMIUM", p)
		if os.Getenv("CI") == "" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return p
}

// browserRun is headless Chromium with its own profile, signing in as one user.
type browserRun struct {
	w       *world
	bin     string
	profile string
	login   string
	shots   string // the folder screenshots are saved in
}

// signInURL goes through the whole sign-in: the simulator's login, the app's /fleet/login,
// GitHub's authorize page and the app's callback, and ends on /fleet.
func (b *browserRun) signInURL() string {
	return b.w.sim.URL() + "/login?user=" + b.login + "&return_to=" + url.QueryEscape("http://"+b.w.addr+"/fleet/login")
}

// chrome runs the browser once on the sign-in URL with extra flags and returns its output.
func (b *browserRun) chrome(flags ...string) string {
	b.w.t.Helper()
	return b.run(b.signInURL(), flags...)
}

// step loads /fleet after sign-in, saves a screenshot named after the step and returns the
// rendered DOM.
func (b *browserRun) step(name string) *html.Node {
	b.w.t.Helper()
	shot := filepath.Join(b.shots, name+".png")
	b.chrome("--screenshot=" + shot)
	info, err := os.Stat(shot)
	require.NoError(b.w.t, err, "the screenshot of %s is saved", name)
	require.Greater(b.w.t, info.Size(), int64(1000))
	doc, err := html.Parse(strings.NewReader(b.chrome("--dump-dom")))
	require.NoError(b.w.t, err)
	return doc
}

// envCards returns the environment cards of the sample's control plane: names in page order
// and state by name.
func envCards(doc *html.Node) ([]string, map[string]string) {
	var order []string
	states := map[string]string{}
	var walk func(n *html.Node, inPlane bool)
	walk = func(n *html.Node, inPlane bool) {
		if n.Type == html.ElementNode && n.Data == "section" && attr(n, "data-repo") == fleetRepo {
			inPlane = true
		}
		if inPlane && n.Type == html.ElementNode && n.Data == "article" && strings.Contains(attr(n, "class"), "env") {
			order = append(order, attr(n, "data-env"))
			states[attr(n, "data-env")] = attr(n, "data-state")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inPlane)
		}
	}
	walk(doc, false)
	return order, states
}

// cardText returns the text of the element with the given class inside the card of env.
func cardText(doc *html.Node, env, class string) string {
	return strings.TrimSpace(textIn(doc, "article", env, class))
}

// drillText returns the text of the element with the given class in the drill-down of env.
func drillText(doc *html.Node, env, class string) string { return textIn(doc, "details", env, class) }

// textIn joins the text inside the elements of a class, inside the element named tag whose
// data-env is env.
func textIn(doc *html.Node, tag, env, class string) string {
	var out strings.Builder
	var walk func(n *html.Node, inside, inClass bool)
	walk = func(n *html.Node, inside, inClass bool) {
		if n.Type == html.ElementNode && n.Data == tag && attr(n, "data-env") == env {
			inside = true
		}
		if inside && n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " "+class+" ") {
			inClass = true
		}
		if inClass && n.Type == html.TextNode {
			out.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inside, inClass)
		}
	}
	walk(doc, false, false)
	return out.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func TestE2EFleetInChromium(t *testing.T) {
	bin := chromium(t)
	w := fleetWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "read"))
	alice := w.signIn("alice")
	b := &browserRun{w: w, bin: bin, profile: t.TempDir(), login: "alice", shots: t.ArtifactDir()}
	t.Logf("screenshots in %s", b.shots)

	first := w.declareChain(devOneCluster, stageManual)
	w.waitFleet(alice, "dev", "awaiting merge", func(e fleetview.Environment) bool {
		return e.Main != nil && e.Main.SHA == first && e.Promotion.State == fleetview.StateAwaitingMerge
	})
	doc := b.step("1-awaiting-merge")
	order, states := envCards(doc)
	require.Equal(t, []string{"dev", "stage"}, order, "environments left to right in promotion order")
	require.Equal(t, fleetview.StateAwaitingMerge, states["dev"])
	require.Equal(t, "awaiting merge", cardText(doc, "dev", "state"))
	require.Equal(t, first[:7], cardText(doc, "dev", "pin"))
	require.Contains(t, cardText(doc, "dev", "pr"), "#")
	cells := drillText(doc, "dev", "cells")
	require.Contains(t, cells, "large", "the drill-down lists cluster types × deployment targets")
	require.Contains(t, cells, "observability-prometheus")

	merge := w.mergeEnvPR("dev", first)
	const failing = "kustomization/flux-system/77aa01bc"
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "failure", failing, "health check failed"))
	w.waitFleet(alice, "dev", "failed", func(e fleetview.Environment) bool { return e.Promotion.State == fleetview.StateFailed })
	doc = b.step("2-failed")
	_, states = envCards(doc)
	require.Equal(t, fleetview.StateFailed, states["dev"])
	require.Equal(t, "cluster "+failing+" failed", cardText(doc, "dev", "failed-cluster"), "the failing cluster is named")

	second := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.waitStatus("dev", second, "pending", "waiting for the GitOps pull request")
	w.deployToDev(second)
	w.waitFleet(alice, "stage", "awaiting approval", func(e fleetview.Environment) bool {
		return e.Promotion.State == fleetview.StateAwaitingApproval
	})
	doc = b.step("3-deployed-awaiting-approval")
	_, states = envCards(doc)
	require.Equal(t, fleetview.StateDeployed, states["dev"])
	require.Equal(t, fleetview.StateAwaitingApproval, states["stage"])
	require.Equal(t, "deployed to 1 cluster", cardText(doc, "dev", "state"))
	require.Contains(t, cardText(doc, "stage", "approval"), "write permission on "+fleetRepo)

	misspelt := strings.Replace(clusterType("large", "large"), "reconciler:", "reconciller:", 1)
	broken := w.commit(sample.ControlPlane, "dev", map[string]*string{largeClusterType: &misspelt})
	w.waitFleet(alice, "dev", "the broken render", func(e fleetview.Environment) bool {
		return e.Render.State == fleetview.RenderError && e.Render.Commit != nil && e.Render.Commit.SHA == broken
	})
	doc = b.step("4-broken-environment")
	_, states = envCards(doc)
	require.Equal(t, fleetview.RenderError, states["dev"], "the card shows the error, not the last promotion")
	require.Equal(t, "2 errors, changes held back", cardText(doc, "dev", "state"))
	require.Equal(t, broken[:7], cardText(doc, "dev", "render-commit"), "with the environment branch's commit")
	require.Equal(t, "deployed to 1 cluster", cardText(doc, "dev", "promotion-state"))
	require.Contains(t, drillText(doc, "dev", "cells"), "held back: last good output kept", "held, not dropped")
}
