package ghfake

import (
	"context"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/ghport"
)

// CheckRuns implements ghport.GitHub: one page of ghport.PerPage, newest first as GitHub
// lists them.
func (g *GitHub) CheckRuns(_ context.Context, repo envref.Repo, sha, name string, page int) ([]*github.CheckRun, int, error) {
	defer g.mu.Unlock()
	if err := g.enter("CheckRuns", repo, sha, name, page); err != nil {
		return nil, 0, err
	}
	var all []*github.CheckRun
	for i := len(g.Runs[repo]) - 1; i >= 0; i-- {
		if run := g.Runs[repo][i]; run.GetHeadSHA() == sha && run.GetName() == name {
			all = append(all, run)
		}
	}
	runs, next := pageOf(all, page, ghport.PerPage)
	out := make([]*github.CheckRun, 0, len(runs))
	for _, run := range runs {
		out = append(out, copyRun(run))
	}
	return out, next, nil
}

// CheckRun implements ghport.GitHub.
func (g *GitHub) CheckRun(_ context.Context, repo envref.Repo, id int64) (*github.CheckRun, error) {
	defer g.mu.Unlock()
	if err := g.enter("CheckRun", repo, id); err != nil {
		return nil, err
	}
	if run := g.run(repo, id); run != nil {
		return copyRun(run), nil
	}
	return nil, notFound("check run", id)
}

// CreateCheckRun implements ghport.GitHub.
func (g *GitHub) CreateCheckRun(_ context.Context, repo envref.Repo, opts github.CreateCheckRunOptions) (*github.CheckRun, error) {
	defer g.mu.Unlock()
	if err := g.enter("CreateCheckRun", repo, opts); err != nil {
		return nil, err
	}
	run := &github.CheckRun{ID: github.Int64(g.nextID()), Name: github.String(opts.Name), HeadSHA: github.String(opts.HeadSHA),
		ExternalID: opts.ExternalID, Status: opts.Status, Conclusion: opts.Conclusion, Output: &github.CheckRunOutput{}}
	g.Runs[repo] = append(g.Runs[repo], run)
	g.Actions[run.GetID()] = opts.Actions
	g.output(run, opts.Output)
	return copyRun(run), nil
}

// UpdateCheckRun implements ghport.GitHub.
func (g *GitHub) UpdateCheckRun(_ context.Context, repo envref.Repo, id int64, opts github.UpdateCheckRunOptions) (*github.CheckRun, error) {
	defer g.mu.Unlock()
	if err := g.enter("UpdateCheckRun", repo, id, opts); err != nil {
		return nil, err
	}
	run := g.run(repo, id)
	if run == nil {
		return nil, notFound("check run", id)
	}
	if opts.Status != nil {
		run.Status = opts.Status
	}
	if opts.Conclusion != nil {
		run.Conclusion = opts.Conclusion
	}
	if opts.Actions != nil {
		g.Actions[id] = opts.Actions
	}
	g.output(run, opts.Output)
	return copyRun(run), nil
}

// CompleteCheckRun implements ghport.GitHub.
func (g *GitHub) CompleteCheckRun(_ context.Context, repo envref.Repo, id int64, c ghport.Completion) error {
	defer g.mu.Unlock()
	if err := g.enter("CompleteCheckRun", repo, id, c); err != nil {
		return err
	}
	run := g.run(repo, id)
	if run == nil {
		return notFound("check run", id)
	}
	run.Status, run.Conclusion = github.String("completed"), github.String(c.Conclusion)
	g.Actions[id] = c.Actions
	g.output(run, &github.CheckRunOutput{Title: &c.Title, Summary: &c.Summary})
	return nil
}

// output sets a check run's output as GitHub does: annotations are appended to the ones it has.
func (g *GitHub) output(run *github.CheckRun, out *github.CheckRunOutput) {
	if out == nil {
		return
	}
	have := run.Output
	if out.Title != nil {
		have.Title = out.Title
	}
	if out.Summary != nil {
		have.Summary = out.Summary
	}
	if out.Text != nil {
		have.Text = out.Text
	}
	g.Annotations[run.GetID()] = append(g.Annotations[run.GetID()], out.Annotations...)
	have.AnnotationsCount = github.Int(len(g.Annotations[run.GetID()]))
}

func (g *GitHub) run(repo envref.Repo, id int64) *github.CheckRun {
	for _, run := range g.Runs[repo] {
		if run.GetID() == id {
			return run
		}
	}
	return nil
}

// copyRun copies a check run and its output.
func copyRun(run *github.CheckRun) *github.CheckRun {
	c := *run
	if run.Output != nil {
		out := *run.Output
		c.Output = &out
	}
	return &c
}
