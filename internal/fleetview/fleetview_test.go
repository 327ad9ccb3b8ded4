package fleetview

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/rcrowley/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

func TestPromotionOfStatus(t *testing.T) {
	for _, tc := range []struct {
		state, desc string
		want        Promotion
	}{
		{"pending", "waiting for the GitOps pull request to be merged", Promotion{State: StateAwaitingMerge}},
		{"pending", "1/3 clusters compliant", Promotion{State: StateWaiting, Compliant: 1, Expected: 3}},
		{"success", "deployed to 2 clusters", Promotion{State: StateDeployed, Compliant: 2, Expected: 2}},
		{"failure", "cluster kustomization/flux-system/77aa01bc failed", Promotion{State: StateFailed, FailedCluster: "kustomization/flux-system/77aa01bc"}},
		{"failure", "cluster <script> failed", Promotion{State: StateFailed}},
		{"failure", "timed out after 2s: 0/1 clusters compliant", Promotion{State: StateFailed, Expected: 1}},
		{"error", "superseded by abc", Promotion{State: StateSuperseded}},
	} {
		got := promotionOf(&github.RepoStatus{State: github.String(tc.state), Description: github.String(tc.desc)})
		got.Description = ""
		require.Equal(t, tc.want, got, tc.desc)
	}
	require.Equal(t, StateUnknown, promotionOf(nil).State)
}

func TestPromotionOrderFollowsTheChain(t *testing.T) {
	stage := func(name, after string) *scheduling.Stage {
		e := &scheduling.Environment{}
		e.Name = name
		return &scheduling.Stage{Env: e, After: after}
	}
	chain := &scheduling.Chain{Stages: map[string]*scheduling.Stage{
		"prod": stage("prod", "stage"), "dev": stage("dev", ""), "stage": stage("stage", "dev")}}
	got := promotionOrder([]string{"prod", "sandbox", "stage", "dev"}, chain)
	require.Equal(t, []string{"dev", "stage", "prod", "sandbox"}, got)
}

func TestSessionCookieIsSealedAndExpires(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := newSealer(strings.Repeat("k", 32), time.Hour, func() time.Time { return now })
	require.NoError(t, err)
	v, err := s.seal(Session{Login: "alice", Token: "ghu_secret", Expires: now.Add(time.Hour)})
	require.NoError(t, err)
	require.NotContains(t, v, "ghu_secret")
	got, err := s.open(v)
	require.NoError(t, err)
	require.Equal(t, "alice", got.Login)

	tampered := []byte(v)
	tampered[len(tampered)/2] ^= 1
	_, err = s.open(string(tampered))
	require.ErrorIs(t, err, ErrNoSession)

	other, _ := newSealer(strings.Repeat("x", 32), time.Hour, func() time.Time { return now })
	_, err = other.open(v)
	require.ErrorIs(t, err, ErrNoSession, "another key cannot open it")

	now = now.Add(2 * time.Hour)
	_, err = s.open(v)
	require.ErrorIs(t, err, ErrNoSession, "expired")

	c := s.cookie(v, now.Add(time.Hour), true)
	require.True(t, c.HttpOnly)
	require.True(t, c.Secure)
	require.Equal(t, http.SameSiteLaxMode, c.SameSite)
}

func hostileFleet() *Fleet {
	evil := `<script>alert(1)</script>`
	return &Fleet{ControlPlanes: []ControlPlane{{Repo: "acme/plane", URL: "https://github.com/acme/plane", Environments: []Environment{
		{Name: "dev", Main: &Commit{SHA: strings.Repeat("a", 40), Short: "aaaaaaa", Message: evil, URL: "javascript:alert(1)"},
			Promotion: Promotion{State: StateFailed, FailedCluster: "c1"},
			Assignments: []Assignment{{ClusterType: "large", Target: "app-dev", Folder: "large/app-dev", URL: "https://x/large",
				Error: &Problem{File: "templates/t.yaml", Line: 3, Message: evil}}},
			Errors: []Problem{{File: "templates/t.yaml", Line: 3, Message: evil}}},
		{Name: "stage", After: "dev", Promotion: Promotion{State: StateDeployed, Expected: 2, Deployed: &Commit{Short: "bbbbbbb"}}},
	}}}}
}

func TestPageEscapesEverything(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, RenderPage(&buf, "alice", hostileFleet()))
	out := buf.String()
	require.NotContains(t, out, "<script>alert")
	require.Contains(t, out, "&lt;script&gt;")
	require.NotContains(t, out, `href="javascript:`)
	require.Less(t, strings.Index(out, `data-env="dev"`), strings.Index(out, `data-env="stage"`))
	require.Contains(t, out, "cluster <code>c1</code> failed")
	require.Contains(t, out, "templates/t.yaml:3")
}

func TestBadgeShowsOnlyStateAndSHA(t *testing.T) {
	f := hostileFleet()
	b := BadgeFor(f, "ACME/plane", "stage")
	require.Equal(t, Badge{Label: "stage", Message: "deployed to 2 clusters bbbbbbb", Color: "#4c1"}, b)
	require.Equal(t, "unknown", BadgeFor(f, "acme/other", "stage").Message)
	svg := string(BadgeFor(f, "acme/plane", "dev").SVG())
	require.Contains(t, svg, "<title>dev: failed</title>")
	require.NotContains(t, svg, "script")

	svc, err := New(Options{Badges: true, Refresh: time.Hour})
	require.NoError(t, err)
	svc.last, svc.built = f, time.Now()
	mux := http.NewServeMux()
	svc.Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/badges/acme/plane/stage.svg", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "image/svg+xml", rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Header().Get("Cache-Control"), "max-age=60")
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest("GET", "/badges/acme/plane/stage.svg", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	require.Equal(t, http.StatusNotModified, rec.Code)
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/badges/acme/plane/st%3Cx.svg", nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/fleet", nil))
	require.Equal(t, http.StatusNotFound, rec.Code, "the fleet view is off without OAuth")
}

func TestMetricsGaugesAndLeadTime(t *testing.T) {
	reg := metrics.NewRegistry()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	m := NewMetrics(reg, func() time.Time { return now })
	committed := now.Add(-time.Hour)
	lead := Seconds(1800)
	f := &Fleet{ControlPlanes: []ControlPlane{{Repo: "acme/plane", Environments: []Environment{{Name: "dev",
		Promotion: Promotion{State: StateWaiting, Compliant: 1, Expected: 3, Deployed: &Commit{Time: &committed}},
		History:   []Deployment{{ID: 7, State: "success", LeadTime: &lead}}}}}}}
	m.update(f)
	m.update(f)
	labels := "[control_plane:acme/plane,environment:dev]"
	require.Equal(t, 2.0, reg.Get(MetricPromotionState+labels).(metrics.GaugeFloat64).Value())
	require.Equal(t, 1.0, reg.Get(MetricClustersCompliant+labels).(metrics.GaugeFloat64).Value())
	require.Equal(t, 3.0, reg.Get(MetricClustersExpected+labels).(metrics.GaugeFloat64).Value())
	require.Equal(t, 3600.0, reg.Get(MetricDeployedAge+labels).(metrics.GaugeFloat64).Value())
	_, counts, sum, count := m.leadTime.Buckets()
	require.Equal(t, uint64(1), count, "a promotion is counted once")
	require.Equal(t, 1800.0, sum)
	require.Equal(t, uint64(0), counts[2])
	require.Equal(t, uint64(1), counts[3])
	m.update(&Fleet{})
	require.Nil(t, reg.Get(MetricPromotionState+labels), "a gone environment's gauges are dropped")
}

// BenchmarkRenderPage renders 100 environments × 100 cluster types (two targets each).
func BenchmarkRenderPage(b *testing.B) {
	f := largeFleet(100, 100, 2)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := RenderPage(&buf, "alice", f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/page")
}

func largeFleet(envs, clusterTypes, targets int) *Fleet {
	cp := ControlPlane{Repo: "acme/plane", URL: "https://github.com/acme/plane"}
	for e := range envs {
		env := Environment{Name: fmt.Sprintf("env-%03d", e), Promotion: Promotion{State: StateDeployed, Expected: clusterTypes},
			Main: &Commit{SHA: strings.Repeat("a", 40), Short: "aaaaaaa", Message: "Change things", URL: "https://github.com/acme/plane/commit/a"}}
		for c := range clusterTypes {
			for t := range targets {
				folder := fmt.Sprintf("ct-%03d/app-%d", c, t)
				env.Assignments = append(env.Assignments, Assignment{ClusterType: fmt.Sprintf("ct-%03d", c), Target: fmt.Sprintf("app-%d", t),
					Workload: "app", Folder: folder, URL: "https://github.com/acme/gitops/tree/dev/" + folder})
			}
		}
		cp.Environments = append(cp.Environments, env)
	}
	return &Fleet{ControlPlanes: []ControlPlane{cp}}
}

func TestSignInRefusesAForeignState(t *testing.T) {
	svc, err := New(Options{OAuth: &OAuth{ClientID: "id", WebURL: "https://github.example", PublicURL: "https://kalypso.example"},
		SessionKey: strings.Repeat("k", 32), SessionTTL: time.Hour})
	require.NoError(t, err)
	mux := http.NewServeMux()
	svc.Register(mux)

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/fleet/login", nil))
	require.Equal(t, http.StatusFound, rec.Code)
	loc := rec.Header().Get("Location")
	require.True(t, strings.HasPrefix(loc, "https://github.example/login/oauth/authorize?"), loc)
	require.Contains(t, loc, "redirect_uri=https%3A%2F%2Fkalypso.example%2Ffleet%2Fcallback")
	state := rec.Result().Cookies()[0]
	require.Equal(t, stateCookie, state.Name)
	require.True(t, state.HttpOnly)
	require.True(t, state.Secure)

	for name, req := range map[string]*http.Request{
		"no state cookie": httptest.NewRequest("GET", "/fleet/callback?code=c&state="+state.Value, nil),
		"another state":   httptest.NewRequest("GET", "/fleet/callback?code=c&state=forged", nil),
		"no code":         httptest.NewRequest("GET", "/fleet/callback?state="+state.Value, nil),
	} {
		if name != "no state cookie" {
			req.AddCookie(state)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		require.Equal(t, http.StatusBadRequest, rec.Code, name)
		require.Empty(t, cookieNamed(rec.Result().Cookies(), SessionCookie), name)
	}

	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/fleet", nil))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
}

func cookieNamed(cookies []*http.Cookie, name string) string {
	for _, c := range cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
