package reconcile

import (
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestReuseCheckRun(t *testing.T) {
	want := checkContent{Conclusion: "failure", Title: "2 errors in dev", Summary: "s", Text: "t", Annotations: 2}
	run := func(conclusion, title string, annotations int) *github.CheckRun {
		return &github.CheckRun{Status: github.String("completed"), Conclusion: github.String(conclusion),
			Output: &github.CheckRunOutput{Title: github.String(title), Summary: github.String("s"), Text: github.String("t"),
				AnnotationsCount: github.Int(annotations)}}
	}
	cases := map[string]struct {
		existing        *github.CheckRun
		want            checkContent
		action          runAction
		withAnnotations bool
	}{
		"no check run yet":                {nil, want, createRun, false},
		"the same again (a replay)":       {run("failure", "2 errors in dev", 2), want, keepRun, false},
		"other text, no annotations yet":  {run("success", "dev: 4 assignments", 0), want, updateRun, true},
		"other text, the same annotation": {run("failure", "2 errors in dev, pull request #3", 2), want, updateRun, false},
		"other annotations would stay":    {run("failure", "1 errors in dev", 1), want, createRun, false},
		"annotations gone would stay":     {run("failure", "2 errors in dev", 2), checkContent{Conclusion: "success", Title: "ok"}, createRun, false},
		"still in progress":               {&github.CheckRun{Status: github.String("in_progress")}, checkContent{}, updateRun, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			action, withAnnotations := reuseCheckRun(tc.existing, tc.want)
			require.Equal(t, tc.action, action)
			require.Equal(t, tc.withAnnotations, withAnnotations)
		})
	}
}
