package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/fleetview"
	"github.com/kalypso-gitops/kalypso/internal/githubsim"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

const fleetRepo = sample.Owner + "/" + sample.ControlPlane

// fleetWorld starts the app with the fleet view, the badges, a fast compliance poll and the
// extra settings.
func fleetWorld(t *testing.T, extra ...string) *world {
	w := newWorld(t)
	w.start(append(w.fleetEnv(), extra...)...)
	return w
}

// fleetEnv is the settings of an app with the fleet view, the badges and a fast compliance
// poll; every replica shares them.
func (w *world) fleetEnv() []string {
	return append(fleetSettings(w), "KALYPSO_PROMOTION_POLL_INTERVAL=100ms", "KALYPSO_FLEET_BADGES=true")
}

// fleetSettings turn the fleet view on, signing in through the simulator.
func fleetSettings(w *world) []string {
	return []string{"KALYPSO_FLEET_ENABLED=true",
		"KALYPSO_FLEET_PUBLIC_URL=http://" + w.addr,
		"KALYPSO_FLEET_CLIENT_ID=" + w.sim.ClientID(),
		"KALYPSO_FLEET_CLIENT_SECRET=" + w.sim.ClientSecret(),
		"KALYPSO_FLEET_SESSION_KEY=e2e-session-key-0123456789abcdef0123",
		"KALYPSO_FLEET_REFRESH_INTERVAL=0"}
}

// signIn signs login in to the simulator, then to the app through the OAuth web flow, and
// returns the browser (a client with its cookies).
func (w *world) signIn(login string) *http.Client {
	w.t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(w.t, err)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := browser.Get(w.sim.URL() + "/login?user=" + login + "&return_to=" + url.QueryEscape("http://"+w.addr+"/fleet/login"))
	require.NoError(w.t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(w.t, http.StatusOK, resp.StatusCode, "sign-in ends on the fleet page: %s", body)
	require.Equal(w.t, "/fleet", resp.Request.URL.Path)
	return browser
}

// fleet reads /api/v1/fleet as the browser's user.
func (w *world) fleet(browser *http.Client) *fleetview.Fleet {
	w.t.Helper()
	resp, err := browser.Get("http://" + w.addr + "/api/v1/fleet")
	require.NoError(w.t, err)
	defer resp.Body.Close()
	require.Equal(w.t, http.StatusOK, resp.StatusCode)
	var f fleetview.Fleet
	require.NoError(w.t, json.NewDecoder(resp.Body).Decode(&f))
	return &f
}

// fleetEnvs returns the environments of the sample's control plane, by name, and their order.
func (w *world) fleetEnvs(browser *http.Client) (map[string]fleetview.Environment, []string) {
	w.t.Helper()
	envs, order := map[string]fleetview.Environment{}, []string{}
	for _, cp := range w.fleet(browser).ControlPlanes {
		if cp.Repo != fleetRepo {
			continue
		}
		for _, e := range cp.Environments {
			envs[e.Name] = e
			order = append(order, e.Name)
		}
	}
	return envs, order
}

// waitFleet waits until the environment satisfies cond and returns it.
func (w *world) waitFleet(browser *http.Client, env string, what string, cond func(fleetview.Environment) bool) fleetview.Environment {
	w.t.Helper()
	var got fleetview.Environment
	w.eventually(func() bool {
		envs, _ := w.fleetEnvs(browser)
		got = envs[env]
		return cond(got)
	}, "the fleet view shows "+env+" "+what)
	return got
}

// fleetGet answers a GET on the app without cookies.
func (w *world) fleetGet(path string) (*http.Response, string) {
	w.t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get("http://" + w.addr + path)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestE2EFleetAccessRules(t *testing.T) {
	w := fleetWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "read"))

	resp, body := w.fleetGet("/api/v1/fleet")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no cookie, no data")
	require.NotContains(t, body, sample.ControlPlane)
	resp, _ = w.fleetGet("/fleet")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/fleet/login", resp.Header.Get("Location"))

	forged := &http.Client{}
	req, _ := http.NewRequest("GET", "http://"+w.addr+"/api/v1/fleet", nil)
	req.AddCookie(&http.Cookie{Name: fleetview.SessionCookie, Value: "eyJsIjoiYWxpY2UifQ"})
	resp, err := forged.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a forged cookie is no session")

	bob := w.signIn("bob")
	require.Empty(t, w.fleet(bob).ControlPlanes, "bob cannot read the control plane, so he sees nothing of it")
	page := w.page(bob)
	require.Contains(t, page, "No control plane you can read")
	require.NotContains(t, page, sample.ControlPlane)

	alice := w.signIn("alice")
	envs, order := w.fleetEnvs(alice)
	require.NotEmpty(t, envs, "alice reads the control plane")
	require.Contains(t, w.page(alice), sample.ControlPlane)
	require.NotEmpty(t, order)

	w.settle()
	w.fleetEnvs(alice)
	before, calls := w.sim.RateLimitRemaining(w.seeded.Installation), totalCalls(w.sim.Calls())
	w.fleetEnvs(alice)
	require.Equal(t, before, w.sim.RateLimitRemaining(w.seeded.Installation),
		"nothing changed: every read is conditional and answered 304, which costs no rate limit")
	perEnv := (totalCalls(w.sim.Calls()) - calls) / len(envs)
	require.LessOrEqual(t, perEnv, 4+5, "a few REST calls per environment")

	w.sim.InjectFault(githubsim.Fault{Method: "GET", PathPattern: "/repos/{owner}/{repo}/deployments", Status: http.StatusForbidden, Times: 1})
	envs, _ = w.fleetEnvs(alice)
	var partly []string
	for name, e := range envs {
		if e.ReadError != "" {
			partly = append(partly, name)
		}
	}
	require.Len(t, partly, 1, "one environment GitHub failed for says so; the others are whole")
	require.Len(t, envs, len(order))
}

func totalCalls(calls map[string]int) int {
	n := 0
	for route, c := range calls {
		if !strings.HasPrefix(route, "GET /user") && route != "GET /repos/{owner}/{repo}" {
			n += c
		}
	}
	return n
}

// page reads /fleet as the browser's user.
func (w *world) page(browser *http.Client) string {
	w.t.Helper()
	resp, err := browser.Get("http://" + w.addr + "/fleet")
	require.NoError(w.t, err)
	defer resp.Body.Close()
	require.Equal(w.t, http.StatusOK, resp.StatusCode)
	require.Equal(w.t, "no-store", resp.Header.Get("Cache-Control"))
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func TestE2EFleetFollowsAPromotion(t *testing.T) {
	w := fleetWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "read"))
	alice := w.signIn("alice")

	first := w.declareChain(devOneCluster, stageManual)
	dev := w.waitFleet(alice, "dev", "awaiting the merge of "+first[:7], func(e fleetview.Environment) bool {
		return e.Main != nil && e.Main.SHA == first && e.Promotion.State == fleetview.StateAwaitingMerge && e.GitOps.PullRequest != nil
	})
	require.Equal(t, "automatic", dev.Approval)
	require.NotEmpty(t, dev.Assignments, "cluster types × deployment targets")
	require.Contains(t, dev.Assignments[0].URL, sample.GitOpsRepo+"/tree/")
	require.Equal(t, first, dev.Assignments[0].MainCommit)
	require.Len(t, dev.Assignments[0].WorkloadCommit, 40, "the workload commit it was rendered from")
	_, order := w.fleetEnvs(alice)
	require.Less(t, indexOf(order, "dev"), indexOf(order, "stage"), "environments in promotion order")

	merge := w.mergeEnvPR("dev", first)
	w.waitFleet(alice, "dev", "waiting 0/1", func(e fleetview.Environment) bool {
		return e.Promotion.State == fleetview.StateWaiting && e.Promotion.Compliant == 0 && e.Promotion.Expected == 1
	})
	const failing = "kustomization/flux-system/77aa01bc"
	require.NoError(t, w.sim.PostStatus(sample.Owner, sample.GitOpsRepo, merge, "failure", failing, "health check failed"))
	dev = w.waitFleet(alice, "dev", "failed", func(e fleetview.Environment) bool {
		return e.Promotion.State == fleetview.StateFailed
	})
	require.Equal(t, failing, dev.Promotion.FailedCluster)
	require.Contains(t, w.page(alice), failing, "the page names the failing cluster")
	w.badge("dev", "failed")

	second := w.commit(sample.ControlPlane, "main", map[string]*string{"templates/readme.yaml": str("# notes\n")})
	w.waitStatus("dev", second, "pending", "waiting for the GitOps pull request")
	run := w.deployToDev(second)
	dev = w.waitFleet(alice, "dev", "deployed", func(e fleetview.Environment) bool {
		return e.Promotion.State == fleetview.StateDeployed && e.Promotion.Deployed != nil && e.Promotion.Deployed.SHA == second
	})
	require.Equal(t, 1, dev.Promotion.Compliant)
	require.NotNil(t, dev.Promotion.DeployedAt)
	require.NotNil(t, dev.Promotion.Duration)
	require.NotNil(t, dev.Promotion.LeadTime)
	require.GreaterOrEqual(t, len(dev.History), 2, "both promotions to dev are in the history")
	require.Equal(t, second, dev.History[0].Commit.SHA)
	require.Equal(t, "success", dev.History[0].State)
	require.Equal(t, "failure", dev.History[1].State)

	stage := w.waitFleet(alice, "stage", "awaiting approval", func(e fleetview.Environment) bool {
		return e.Promotion.State == fleetview.StateAwaitingApproval
	})
	require.Equal(t, second, stage.Promotion.Approval.Commit.SHA)
	require.Contains(t, stage.Promotion.Approval.Approvers, "write permission on "+fleetRepo)
	w.badge("dev", "deployed to 1 cluster "+second[:7])

	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "lead", "write"))
	w.click(run, "lead")
	w.waitFleet(alice, "stage", "awaiting the merge of "+second[:7], func(e fleetview.Environment) bool {
		return e.Main != nil && e.Main.SHA == second && e.Promotion.State == fleetview.StateAwaitingMerge
	})
	w.requireFleetMetrics()
}

// badge checks the badge of an environment, read without any cookie.
func (w *world) badge(env, message string) {
	w.t.Helper()
	w.eventually(func() bool {
		resp, body := w.fleetGet("/badges/" + fleetRepo + "/" + env + ".svg")
		return resp.StatusCode == http.StatusOK && strings.Contains(body, "<title>"+env+": "+message+"</title>")
	}, "the badge of "+env+" says "+message)
	resp, body := w.fleetGet("/badges/" + fleetRepo + "/" + env + ".svg")
	require.Equal(w.t, "image/svg+xml", resp.Header.Get("Content-Type"))
	require.Contains(w.t, resp.Header.Get("Cache-Control"), "max-age=")
	require.NotContains(w.t, body, sample.GitOpsRepo, "the badge shows nothing but state and SHA")
	_, body = w.fleetGet("/badges/" + sample.Owner + "/unknown/" + env + ".svg")
	require.Contains(w.t, body, ": unknown</title>")
}

// requireFleetMetrics checks the fleet gauges and the lead-time histogram on /metrics.
func (w *world) requireFleetMetrics() {
	w.t.Helper()
	resp, err := http.Get("http://" + w.mgmt + "/metrics")
	require.NoError(w.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	labels := `{control_plane="` + fleetRepo + `",environment="dev"}`
	require.Contains(w.t, text, "kalypso_fleet_promotion_state"+labels+" 3")
	require.Contains(w.t, text, "kalypso_fleet_clusters_compliant"+labels+" 1")
	require.Contains(w.t, text, "kalypso_fleet_clusters_expected"+labels+" 1")
	require.Contains(w.t, text, "kalypso_fleet_deployed_commit_age_seconds"+labels)
	require.Contains(w.t, text, "# TYPE kalypso_fleet_lead_time_seconds histogram")
	require.Contains(w.t, text, `kalypso_fleet_lead_time_seconds_bucket{le="+Inf"} 1`)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestE2EFleetShowsErrorsAtTheirLineEscaped(t *testing.T) {
	w := fleetWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "admin"))
	alice := w.signIn("alice")
	w.commit(sample.WorkloadRepo, "main", map[string]*string{"workloads/observability.yaml": str(observability(`'./<script>alert(1)</script>" # cut'`))})
	dev := w.waitFleet(alice, "dev", "the workload's error", func(e fleetview.Environment) bool {
		for _, p := range e.Errors {
			if strings.Contains(p.File, "workloads/observability.yaml") && p.Line > 0 {
				return true
			}
		}
		return false
	})
	require.NotEmpty(t, dev.Errors)
	page := w.page(alice)
	require.Contains(t, page, "workloads/observability.yaml:")
	require.Contains(t, page, "&lt;script&gt;", "the error quotes the value")
	require.NotContains(t, page, "<script>alert(1)</script>", "values from a workload repository are escaped")
}

// A push of a misspelt ClusterType to dev: the fleet view's card, JSON and badge say so, with
// the environment branch's commit, and the assignment whose last good output the clusters
// still run is listed as held back, not dropped.
func TestE2EFleetShowsABrokenEnvironment(t *testing.T) {
	w := fleetWorld(t)
	require.NoError(t, w.sim.SetPermission(sample.Owner, sample.ControlPlane, "alice", "read"))
	alice := w.signIn("alice")
	first := w.declareChain(devOneCluster, stageManual)
	w.deployToDev(first)
	good := w.waitFleet(alice, "dev", "deployed", func(e fleetview.Environment) bool {
		return e.Render.State == fleetview.RenderOK && len(e.Assignments) == 1 && e.Promotion.State == fleetview.StateDeployed
	})
	require.Equal(t, fleetview.AssignmentRendered, good.Assignments[0].State)
	require.Contains(t, w.tree("dev"), "large/observability-prometheus/reconciler.yaml", "the clusters run it")
	w.badge("dev", "deployed to 1 cluster "+first[:7])

	misspelt := strings.Replace(clusterType("large", "large"), "reconciler:", "reconciller:", 1)
	sha := w.commit(sample.ControlPlane, "dev", map[string]*string{largeClusterType: &misspelt})
	dev := w.waitFleet(alice, "dev", "the broken render", func(e fleetview.Environment) bool {
		return e.Render.State == fleetview.RenderError && e.Render.Commit != nil && e.Render.Commit.SHA == sha
	})
	require.Equal(t, "2 errors, changes held back", dev.Render.Summary)
	require.Equal(t, 2, dev.Render.Errors)
	require.Len(t, dev.Errors, 2)
	require.Equal(t, 1, dev.Render.Held)
	require.Len(t, dev.Assignments, 1, "held, not dropped")
	held := dev.Assignments[0]
	require.Equal(t, "large/observability-prometheus", held.ClusterType+"/"+held.Target)
	require.Equal(t, fleetview.AssignmentHeld, held.State)
	require.Equal(t, fleetview.StateDeployed, dev.Promotion.State, "the last promotion is shown apart")

	page := w.page(alice)
	require.Contains(t, page, `data-state="error" data-promotion="deployed"`)
	require.Contains(t, page, "2 errors, changes held back")
	require.Contains(t, page, `<code class="render-commit">`+sha[:7]+`</code>`)
	require.Contains(t, page, "held back: last good output kept")
	w.badge("dev", "2 errors, changes held back "+sha[:7])

	fixed := clusterType("large", "large")
	w.commit(sample.ControlPlane, "dev", map[string]*string{largeClusterType: &fixed})
	w.waitFleet(alice, "dev", "rendered again", func(e fleetview.Environment) bool {
		return e.Render.State == fleetview.RenderOK && len(e.Assignments) == 1 && e.Assignments[0].State == fleetview.AssignmentRendered
	})
}
