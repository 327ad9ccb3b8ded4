package reconcile

import (
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envcheck"
	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// checkContent is what an environment's check run says.
type checkContent struct {
	Conclusion, Title, Summary, Text string
	Annotations                      int
	Actions                          []*github.CheckRunAction // buttons to show; none keeps what the run shows
}

// runAction is what Report does with the check run already on a commit.
type runAction int

const (
	createRun runAction = iota // post a new check run
	updateRun                  // update the existing one in place
	keepRun                    // the existing one already says it all
)

// reuseCheckRun decides how to report want on a commit that already has existing (nil when it
// has none), and whether an update sends the annotations. GitHub only ever appends annotations
// to a check run, so an existing run is updated with annotations only when it has none, and
// without them when it has as many as wanted: they are errors in the commit's own files, which
// do not change. A run with other annotations would keep stale ones: a new run replaces it.
func reuseCheckRun(existing *github.CheckRun, want checkContent) (action runAction, withAnnotations bool) {
	if existing == nil {
		return createRun, false
	}
	have := existing.GetOutput()
	count := have.GetAnnotationsCount()
	switch {
	case existing.GetStatus() == "completed" && existing.GetConclusion() == want.Conclusion && have.GetTitle() == want.Title &&
		have.GetSummary() == want.Summary && have.GetText() == want.Text && count == want.Annotations:
		return keepRun, false
	case count == 0:
		return updateRun, true
	case count == want.Annotations:
		return updateRun, false
	}
	return createRun, false
}

// lockReports serializes the reports of one environment on one repository, so that two events
// for the same commit never both find no check run and both create one.
func (r *Reconciler) lockReports(repo envref.Repo, env string) (unlock func()) {
	m, _ := r.reports.LoadOrStore(repo.String()+"\x00"+env, &sync.Mutex{})
	m.(*sync.Mutex).Lock()
	return m.(*sync.Mutex).Unlock
}

// keepHold keeps the hold an environment's check run shows (written by the promoter while the
// environment is held) when the commit is reported again: only the promoter takes it away.
func keepHold(want checkContent, existing *github.CheckRun) checkContent {
	if existing == nil {
		return want
	}
	paragraph, held := envcheck.HoldOf(existing.GetOutput().GetSummary())
	if !held {
		return want
	}
	c := envcheck.WithHold(envcheck.Content{Conclusion: want.Conclusion, Title: want.Title, Summary: want.Summary}, paragraph)
	want.Conclusion, want.Title, want.Summary = c.Conclusion, c.Title, truncate(c.Summary, maxOutputText)
	return want
}
