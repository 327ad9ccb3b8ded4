package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// hubWorld starts the app with the fleet view and the reports endpoint.
func hubWorld(t *testing.T) *world {
	w := newWorld(t)
	w.start(append(fleetSettings(w), "KALYPSO_PROMOTION_POLL_INTERVAL=10m", "KALYPSO_REPORTS_SECRET="+reportSecret,
		"KALYPSO_STORE_PATH="+filepath.Join(t.TempDir(), "hub.db"))...)
	return w
}

// open loads a hub page in the browser whose profile holds the session, saves a screenshot
// named after the view and returns the rendered DOM.
func (b *browserRun) open(name, path string) *html.Node {
	b.w.t.Helper()
	page := "http://" + b.w.addr + path
	shot := filepath.Join(b.shots, name+".png")
	b.run(page, "--screenshot="+shot)
	info, err := os.Stat(shot)
	require.NoError(b.w.t, err, "the screenshot of %s is saved", name)
	require.Greater(b.w.t, info.Size(), int64(1000))
	doc, err := html.Parse(strings.NewReader(b.run(page, "--dump-dom")))
	require.NoError(b.w.t, err)
	return doc
}

// run starts the browser once on url with extra flags and returns its output.
func (b *browserRun) run(url string, flags ...string) string {
	b.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--hide-scrollbars", "--window-size=1400,1000", "--user-data-dir=" + b.profile}, flags...)
	cmd := exec.CommandContext(ctx, b.bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(b.w.t, cmd.Run(), "chromium: %s", stderr.String())
	return stdout.String()
}

// rows returns the elements of a class, each as its data-* attributes and its text.
func rows(doc *html.Node, class string) []map[string]string {
	var out []map[string]string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " "+class+" ") {
			row := map[string]string{"text": strings.Join(strings.Fields(textOf(n)), " ")}
			for _, a := range n.Attr {
				if k, ok := strings.CutPrefix(a.Key, "data-"); ok {
					row[k] = a.Val
				}
			}
			out = append(out, row)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func textOf(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textOf(c) + " ")
	}
	return b.String()
}

func TestE2EHubPagesInChromium(t *testing.T) {
	bin := chromium(t)
	w := hubWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "read"))
	b := &browserRun{w: w, bin: bin, profile: t.TempDir(), login: "alice", shots: t.ArtifactDir()}
	t.Logf("screenshots in %s", b.shots)

	// Twelve clusters take the first promotion: one fails, within maxFailed 1.
	var clusters []string
	for i := range 12 {
		clusters = append(clusters, fmt.Sprintf("west-%02d", i+1))
	}
	main1 := w.declareChain("    timeout: 10m\n    compliance:\n      minPercent: 80\n      maxFailed: 1\n      minClusters: 11\n", stageManual)
	merge1 := w.mergeEnvPR("dev", main1)
	w.report(clusters[0], "large", merge1, true)
	w.reportAll(clusters[1:], merge1)
	w.waitStatus("dev", main1, "success", "deployed to 11 clusters")

	// The second promotion reaches half of them: the others drift behind.
	main2 := w.commit(sample.ControlPlane, "main", map[string]*string{".environments/dev.yaml": str(environmentDoc("dev",
		"    timeout: 10m\n    compliance:\n      minPercent: 50\n"))})
	merge2 := w.mergeEnvPR("dev", main2)
	w.reportAll(clusters[1:7], merge2)
	w.waitStatus("dev", main2, "success", "deployed to 6 clusters")

	b.run(b.signInURL(), "--dump-dom") // signs in; the profile keeps the session cookie
	cp := sample.Owner + "/" + sample.ControlPlane
	q := "?controlPlane=" + cp + "&environment=dev"

	doc := b.open("hub-1-environments", "/fleet/hub/environments")
	envs := rows(doc, "environment")
	require.Len(t, envs, 2, "dev and stage")
	require.Equal(t, "dev", envs[0]["env"])
	require.Contains(t, envs[0]["text"], "12", "twelve registered clusters")

	doc = b.open("hub-2-clusters", "/fleet/hub/clusters"+q)
	list := rows(doc, "cluster")
	require.Len(t, list, 12)
	require.Equal(t, "west-01", list[0]["cluster"])
	require.Equal(t, "failure", list[0]["state"], "the failed cluster has not reported the new commit")
	require.Contains(t, list[0]["text"], "behind")
	require.Equal(t, "success", list[1]["state"])
	require.Contains(t, list[1]["text"], main2[:7], "the main commit each cluster runs")
	require.NotContains(t, list[1]["text"], "behind", "west-02 runs the desired commit")

	doc = b.open("hub-3-cluster", "/fleet/hub/cluster"+q+"&cluster=west-01")
	reports := rows(doc, "state-failure")
	require.NotEmpty(t, reports, "the cluster's failed report is in its history")

	doc = b.open("hub-4-workloads", "/fleet/hub/workloads?controlPlane="+cp)
	placements := rows(doc, "placement")
	require.NotEmpty(t, placements, "the sample's workloads, per environment")

	doc = b.open("hub-5-drift", "/fleet/hub/drift"+q)
	drift := rows(doc, "drifted")
	require.Len(t, drift, 6, "six clusters are behind the desired commit")
	var behind []string
	for _, d := range drift {
		behind = append(behind, d["cluster"])
	}
	require.ElementsMatch(t, []string{"west-01", "west-08", "west-09", "west-10", "west-11", "west-12"}, behind)

	doc = b.open("hub-6-compare", "/fleet/hub/compare?controlPlane="+cp+"&from=dev&to=stage")
	diffs := rows(doc, "difference")
	require.NotEmpty(t, diffs, "dev and stage differ")

	doc = b.open("hub-7-history", "/fleet/hub/history"+q)
	hist := rows(doc, "deployment")
	require.Len(t, hist, 2)
	require.Equal(t, "success", hist[0]["state"])
	require.Contains(t, hist[1]["text"], "failed (within maxFailed): west-01", "the verdict names the failed cluster")
	require.Contains(t, hist[0]["text"], "not compliant: west-01, west-08, west-09", "and the stragglers")

	doc = b.open("hub-8-dora", "/fleet/hub/dora"+q)
	require.Contains(t, strings.Join(strings.Fields(textOf(doc)), " "), "2 finished deployments")
}
