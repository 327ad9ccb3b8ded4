package githubsim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestCheckRunValidation(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("x", 65536)
	ann := func(level string) *github.CheckRunAnnotation {
		return &github.CheckRunAnnotation{Path: ptr("a"), StartLine: ptr(1), EndLine: ptr(2), AnnotationLevel: &level, Message: ptr("m")}
	}
	many := func(n int) []*github.CheckRunAnnotation {
		out := make([]*github.CheckRunAnnotation, n)
		for i := range out {
			out[i] = ann("notice")
		}
		return out
	}
	act := func(label, desc, id string) []*github.CheckRunAction {
		return []*github.CheckRunAction{{Label: label, Description: desc, Identifier: id}}
	}
	tests := []struct {
		name string
		mod  func(o *github.CreateCheckRunOptions)
		want int
	}{
		{"minimal", func(o *github.CreateCheckRunOptions) {}, http.StatusCreated},
		{"summary at the limit", func(o *github.CreateCheckRunOptions) {
			o.Output = &github.CheckRunOutput{Title: ptr("t"), Summary: ptr(long[1:]), Text: ptr(long[1:])}
		}, http.StatusCreated},
		{"summary too long", func(o *github.CreateCheckRunOptions) {
			o.Output = &github.CheckRunOutput{Title: ptr("t"), Summary: &long}
		}, 422},
		{"text too long", func(o *github.CreateCheckRunOptions) {
			o.Output = &github.CheckRunOutput{Title: ptr("t"), Summary: ptr("s"), Text: &long}
		}, 422},
		{"output without summary", func(o *github.CreateCheckRunOptions) { o.Output = &github.CheckRunOutput{Title: ptr("t")} }, 422},
		{"50 annotations", func(o *github.CreateCheckRunOptions) {
			o.Output = &github.CheckRunOutput{Title: ptr("t"), Summary: ptr("s"), Annotations: many(50)}
		}, http.StatusCreated},
		{"51 annotations", func(o *github.CreateCheckRunOptions) {
			o.Output = &github.CheckRunOutput{Title: ptr("t"), Summary: ptr("s"), Annotations: many(51)}
		}, 422},
		{"bad annotation level", func(o *github.CreateCheckRunOptions) {
			o.Output = &github.CheckRunOutput{Title: ptr("t"), Summary: ptr("s"), Annotations: []*github.CheckRunAnnotation{ann("error")}}
		}, 422},
		{"three actions", func(o *github.CreateCheckRunOptions) {
			o.Actions = append(append(act("a", "b", "c"), act("d", "e", "f")...), act("g", "h", "i")...)
		}, http.StatusCreated},
		{"four actions", func(o *github.CreateCheckRunOptions) {
			o.Actions = append(append(append(act("a", "b", "c"), act("d", "e", "f")...), act("g", "h", "i")...), act("j", "k", "l")...)
		}, 422},
		{"label too long", func(o *github.CreateCheckRunOptions) { o.Actions = act(strings.Repeat("l", 21), "d", "i") }, 422},
		{"description too long", func(o *github.CreateCheckRunOptions) { o.Actions = act("l", strings.Repeat("d", 41), "i") }, 422},
		{"identifier too long", func(o *github.CreateCheckRunOptions) { o.Actions = act("l", "d", strings.Repeat("i", 21)) }, 422},
		{"completed without conclusion", func(o *github.CreateCheckRunOptions) { o.Status = ptr("completed") }, 422},
		{"unknown status", func(o *github.CreateCheckRunOptions) { o.Status = ptr("waiting") }, 422},
		{"unknown commit", func(o *github.CreateCheckRunOptions) { o.HeadSHA = strings.Repeat("1", 40) }, 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := github.CreateCheckRunOptions{Name: "kalypso", HeadSHA: f.seed}
			tt.mod(&opts)
			_, resp, _ := f.client.Checks.CreateCheckRun(ctx(), testOwner, testRepo, opts)
			require.Equal(t, tt.want, resp.StatusCode)
		})
	}
}

func TestCheckRunsForRef(t *testing.T) {
	f := newFixture(t)
	create := func(name string, conclusion *string) *github.CheckRun {
		run, _, err := f.client.Checks.CreateCheckRun(ctx(), testOwner, testRepo, github.CreateCheckRunOptions{Name: name, HeadSHA: f.seed, Conclusion: conclusion})
		require.NoError(t, err)
		return run
	}
	create("dev", ptr("failure"))
	latest := create("dev", ptr("success"))
	create("prod", nil)
	tests := []struct {
		name string
		opts github.ListCheckRunsOptions
		want int
	}{
		{"latest per name", github.ListCheckRunsOptions{}, 2},
		{"all", github.ListCheckRunsOptions{Filter: ptr("all")}, 3},
		{"by name", github.ListCheckRunsOptions{CheckName: ptr("dev")}, 1},
		{"by status", github.ListCheckRunsOptions{Status: ptr("queued"), Filter: ptr("all")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _, err := f.client.Checks.ListCheckRunsForRef(ctx(), testOwner, testRepo, "main", &tt.opts)
			require.NoError(t, err)
			require.Equal(t, tt.want, res.GetTotal())
			require.Len(t, res.CheckRuns, tt.want)
		})
	}
	res, _, err := f.client.Checks.ListCheckRunsForRef(ctx(), testOwner, testRepo, f.seed, &github.ListCheckRunsOptions{CheckName: ptr("dev")})
	require.NoError(t, err)
	require.Equal(t, latest.GetID(), res.CheckRuns[0].GetID())
	require.Len(t, f.sim.CheckRuns(testOwner, testRepo, f.seed), 3)
	require.Error(t, f.sim.ClickCheckRunAction(latest.GetID(), "promote", "octocat"), "no such button")
	_, err = f.client.Checks.ReRequestCheckRun(ctx(), testOwner, testRepo, latest.GetID())
	require.NoError(t, err)
	require.Equal(t, "rerequested", last[*github.CheckRunEvent](t, f.hooks).GetAction())
}

func TestCheckRunAnnotationsAppend(t *testing.T) {
	f := newFixture(t)
	batch := func(n int) *github.CheckRunOutput {
		out := &github.CheckRunOutput{Title: ptr("t"), Summary: ptr("s")}
		for range n {
			out.Annotations = append(out.Annotations, &github.CheckRunAnnotation{Path: ptr("a"), StartLine: ptr(1), EndLine: ptr(1), AnnotationLevel: ptr("warning"), Message: ptr("m")})
		}
		return out
	}
	run, _, err := f.client.Checks.CreateCheckRun(ctx(), testOwner, testRepo, github.CreateCheckRunOptions{Name: "n", HeadSHA: f.seed, Output: batch(50)})
	require.NoError(t, err)
	for range 2 {
		run, _, err = f.client.Checks.UpdateCheckRun(ctx(), testOwner, testRepo, run.GetID(), github.UpdateCheckRunOptions{Name: "n", Output: batch(50)})
		require.NoError(t, err)
	}
	require.Equal(t, 150, run.GetOutput().GetAnnotationsCount())
	anns, _, err := f.client.Checks.ListCheckRunAnnotations(ctx(), testOwner, testRepo, run.GetID(), &github.ListOptions{PerPage: 100, Page: 2})
	require.NoError(t, err)
	require.Len(t, anns, 50)
	stored, _, err := f.sim.CheckRunDetails(run.GetID())
	require.NoError(t, err)
	require.Len(t, stored, 150)
}
