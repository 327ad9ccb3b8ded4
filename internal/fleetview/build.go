package fleetview

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Index lists the environments of an installation (reconcile.Index).
type Index interface {
	Environments(ctx context.Context, installation int64) ([]envref.EnvInfo, error)
}

// Results gives the last result the app rendered for an environment (reconcile.Reconciler).
type Results interface {
	LastResult(env envref.Env) (*render.Result, []scheduling.SourceCommit, bool)
}

// Sources is where the fleet view reads from.
type Sources struct {
	Installations func(ctx context.Context) ([]int64, error)
	Index         Index
	Results       Results
	Repos         Repos
	Clients       Clients
	WebURL        string // GitHub's web URL, for links
	Now           func() time.Time
	Holds         Holds // nil: no holds shown
}

// Build reads the whole fleet: every control plane of every installation.
func (s Sources) Build(ctx context.Context) (*Fleet, error) {
	insts, err := s.Installations(ctx)
	if err != nil {
		return nil, fmt.Errorf("fleet: installations: %w", err)
	}
	f := &Fleet{GeneratedAt: s.now(), ControlPlanes: []ControlPlane{}}
	for _, inst := range insts {
		envs, err := s.Index.Environments(ctx, inst)
		if err != nil {
			return nil, fmt.Errorf("fleet: environments of installation %d: %w", inst, err)
		}
		planes, err := s.planes(ctx, inst, envs)
		if err != nil {
			return nil, err
		}
		f.ControlPlanes = append(f.ControlPlanes, planes...)
	}
	sort.Slice(f.ControlPlanes, func(i, j int) bool { return f.ControlPlanes[i].Repo < f.ControlPlanes[j].Repo })
	return f, nil
}

func (s Sources) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// planes groups an installation's environments by control plane and reads each one.
func (s Sources) planes(ctx context.Context, inst int64, envs []envref.EnvInfo) ([]ControlPlane, error) {
	byPlane := map[envref.Repo]map[string]envref.EnvInfo{}
	for _, e := range envs {
		if byPlane[e.Env.ControlPlane] == nil {
			byPlane[e.Env.ControlPlane] = map[string]envref.EnvInfo{}
		}
		byPlane[e.Env.ControlPlane][e.Env.Name] = e
	}
	gh, err := s.Clients.Client(ctx, inst)
	if err != nil {
		return nil, fmt.Errorf("fleet: client of installation %d: %w", inst, err)
	}
	var out []ControlPlane
	for cp, infos := range byPlane {
		plane, err := s.plane(ctx, gh, cp, infos)
		if err != nil {
			return nil, err
		}
		plane.Installation = inst
		out = append(out, plane)
	}
	return out, nil
}

// plane reads one control plane's environments in promotion order.
func (s Sources) plane(ctx context.Context, gh *github.Client, cp envref.Repo, infos map[string]envref.EnvInfo) (ControlPlane, error) {
	facts := readPlane(s.Repos, cp)
	names := make([]string, 0, len(infos))
	for n := range infos {
		names = append(names, n)
	}
	plane := ControlPlane{Repo: cp.String(), URL: s.repoURL(cp.String()), Environments: []Environment{}}
	for _, name := range promotionOrder(names, facts.chain) {
		env, err := s.environment(ctx, gh, facts, infos[name])
		if err != nil {
			if ctx.Err() != nil {
				return ControlPlane{}, err
			}
			// One environment GitHub cannot answer for shows what is known, and why the rest
			// is missing; the others are unaffected.
			zerolog.Ctx(ctx).Warn().Err(err).Str("control_plane", cp.String()).Str("environment", name).Msg("fleet view: environment partly read")
			env.ReadError = ellipsis.Cut(err.Error(), 300)
		}
		plane.Environments = append(plane.Environments, env)
	}
	markApprovals(&plane, facts.chain, cp)
	return plane, nil
}

// environment reads one environment: the app's last render from memory, its pin and promotion
// from GitHub (four calls and one per promotion shown, all conditional).
func (s Sources) environment(ctx context.Context, gh *github.Client, facts planeFacts, info envref.EnvInfo) (Environment, error) {
	cp := info.Env.ControlPlane
	env := Environment{Name: info.Env.Name, Render: Render{State: RenderUnknown}, Sources: []Source{}, Assignments: []Assignment{}, Errors: []Problem{}, History: []Deployment{},
		GitOps: GitOps{Repo: info.GitOps.String(), Branch: info.GitOpsBranch, Path: info.GitOpsPath}}
	if st := facts.chain.Stages[env.Name]; st != nil {
		env.After, env.Approval = st.After, "automatic"
		if st.Manual {
			env.Approval = "manual"
		}
	}
	var hold *store.Hold
	if s.Holds != nil {
		holds, err := s.Holds(ctx, cp.String())
		if err != nil {
			return env, fmt.Errorf("fleet: holds of %s: %w", cp, err)
		}
		hold = holdOf(holds, env.Name)
	}
	env.Governance = governanceOf(facts.chain.Stages[env.Name], s.now(), hold)
	if res, sources, ok := s.Results.LastResult(info.Env); ok {
		s.fillRender(&env, info, res, sources, facts)
	}
	if err := s.fillGitOps(ctx, gh, &env, info); err != nil {
		return env, err
	}
	if err := s.fillPromotion(ctx, gh, &env, cp, facts); err != nil {
		return env, err
	}
	return env, nil
}

// fillRender copies the last render: sources, pinned main commit, assignments and errors.
func (s Sources) fillRender(env *Environment, info envref.EnvInfo, res *render.Result, sources []scheduling.SourceCommit, facts planeFacts) {
	for _, src := range sources {
		env.Sources = append(env.Sources, Source{Name: src.Name, Repo: src.Repo, Branch: src.Branch, Commit: validSHA(src.Commit)})
		if src.Name == "main" && validSHA(src.Commit) != "" {
			env.Main = s.commit(info.Env.ControlPlane.String(), src.Commit, facts)
		}
	}
	commits := sourceCommits(res, sources, info.Env.Name)
	for _, a := range res.Assignments {
		folder := path.Join(res.Root, a.Key())
		cell := Assignment{ClusterType: a.ClusterType.Name, Target: a.Target.Name, Workload: a.Target.Workload, Folder: folder,
			URL:        s.repoURL(info.GitOps.String()) + "/tree/" + url.PathEscape(info.GitOpsBranch) + "/" + escapePath(folder),
			State:      AssignmentRendered,
			MainCommit: commits["main"], EnvironmentCommit: commits[info.Env.Name], WorkloadCommit: commits["workload:"+a.Target.Workload]}
		if e := res.Failed[a.Key()]; e != nil {
			p := problemOf(e)
			cell.Error, cell.State = &p, AssignmentFailed
		}
		env.Assignments = append(env.Assignments, cell)
	}
	for _, e := range res.Errors {
		env.Errors = append(env.Errors, problemOf(e))
	}
	var branch *Commit
	if sha := commits[info.Env.Name]; sha != "" {
		branch = s.commit(info.Env.ControlPlane.String(), sha, facts)
	}
	env.Render = renderOf(res, s.markHeld(env, info, res), branch)
}

// sourceCommits maps "main", the environment's name and "workload:<workload>" to the commit
// each was read at, the workloads through the registration that delivered them.
func sourceCommits(res *render.Result, sources []scheduling.SourceCommit, env string) map[string]string {
	bySource := map[string]string{}
	for _, src := range sources {
		bySource[src.Name] = validSHA(src.Commit)
	}
	out := map[string]string{"main": bySource["main"], env: bySource[env]}
	if res.Snapshot == nil {
		return out
	}
	for _, w := range res.Snapshot.Workloads {
		if w.Registration != nil {
			out["workload:"+w.Name] = bySource["workload "+w.Registration.Name]
		}
	}
	return out
}

// fillGitOps reads the GitOps branch head and the app's open pull request.
func (s Sources) fillGitOps(ctx context.Context, gh *github.Client, env *Environment, info envref.EnvInfo) error {
	if info.GitOps.Name == "" {
		return nil
	}
	head, err := gitopsHead(ctx, gh, info.GitOps, info.GitOpsBranch)
	if err != nil {
		return err
	}
	if head != "" {
		env.GitOps.Head = &Commit{SHA: head, Short: short(head), URL: s.repoURL(info.GitOps.String()) + "/commit/" + head}
	}
	pr, err := appPullRequest(ctx, gh, info.GitOps, env.Name)
	if err != nil || pr == nil {
		return err
	}
	env.GitOps.PullRequest = &PullRequest{Number: pr.GetNumber(), Title: ellipsis.Cut(pr.GetTitle(), maxMessage),
		URL: s.repoURL(info.GitOps.String()) + fmt.Sprintf("/pull/%d", pr.GetNumber()), Head: validSHA(pr.GetHead().GetSHA())}
	return nil
}

// fillPromotion reads the state of the pinned commit and the history of promotions.
func (s Sources) fillPromotion(ctx context.Context, gh *github.Client, env *Environment, cp envref.Repo, facts planeFacts) error {
	env.Promotion = Promotion{State: StateUnknown}
	if env.Main != nil {
		st, err := envStatus(ctx, gh, cp, env.Main.SHA, env.Name)
		if err != nil {
			return err
		}
		env.Promotion = promotionOf(st)
	}
	deps, statuses, err := deployments(ctx, gh, cp, env.Name)
	if err != nil {
		return err
	}
	for _, d := range deps {
		env.History = append(env.History, s.deployment(cp.String(), d, statuses[d.GetID()], facts))
	}
	for _, d := range env.History {
		if d.State == "success" {
			c := d.Commit
			env.Promotion.Deployed, env.Promotion.DeployedAt = &c, d.FinishedAt
			env.Promotion.Duration, env.Promotion.LeadTime = d.Duration, d.LeadTime
			break
		}
	}
	return nil
}

// deployment turns a GitHub Deployment and its latest status into a history entry.
func (s Sources) deployment(cp string, d *github.Deployment, st *github.DeploymentStatus, facts planeFacts) Deployment {
	sha := validSHA(d.GetSHA())
	out := Deployment{ID: d.GetID(), Commit: *s.commit(cp, sha, facts), State: "pending"}
	if created := timeOf(d.CreatedAt); created != nil {
		out.Created = *created
	}
	if st == nil {
		return out
	}
	out.State = ellipsis.Cut(st.GetState(), 20)
	if !finalState(out.State) {
		return out
	}
	out.FinishedAt = timeOf(st.CreatedAt)
	if out.FinishedAt != nil {
		out.Duration = secondsOf(out.FinishedAt.Sub(out.Created))
		if out.Commit.Time != nil {
			out.LeadTime = secondsOf(out.FinishedAt.Sub(*out.Commit.Time))
		}
	}
	return out
}

// finalState reports whether a deployment status ends the deployment.
func finalState(state string) bool {
	switch state {
	case "success", "failure", "error", "inactive":
		return true
	}
	return false
}

// commit describes a control-plane commit, with what the local clone knows of it.
func (s Sources) commit(repo, sha string, facts planeFacts) *Commit {
	msg, at := facts.commit(sha)
	return &Commit{SHA: sha, Short: short(sha), Message: msg, Time: at, URL: s.repoURL(repo) + "/commit/" + sha}
}

// markApprovals marks the manual environments whose upstream deployed a commit they do not pin.
func markApprovals(plane *ControlPlane, chain *scheduling.Chain, cp envref.Repo) {
	byName := map[string]*Environment{}
	for i := range plane.Environments {
		byName[plane.Environments[i].Name] = &plane.Environments[i]
	}
	for i := range plane.Environments {
		env := &plane.Environments[i]
		st, up := chain.Stages[env.Name], byName[env.After]
		if st == nil || !st.Manual || up == nil || up.Promotion.State != StateDeployed || up.Main == nil {
			continue
		}
		if env.Main != nil && env.Main.SHA == up.Main.SHA {
			continue
		}
		env.Promotion.Approval = &PendingChange{Commit: *up.Main, From: up.Name, Approvers: approversText(st, cp.String())}
		env.Promotion.State = StateAwaitingApproval
	}
}

// problemOf converts a scheduling error.
func problemOf(e *scheduling.Error) Problem {
	return Problem{File: e.Pos.File, Line: e.Pos.Line, Object: e.Object, Message: ellipsis.Cut(e.Msg, 2000)}
}

// repoURL is the web URL of OWNER/NAME.
func (s Sources) repoURL(repo string) string {
	return strings.TrimSuffix(s.WebURL, "/") + "/" + escapePath(repo)
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	return strings.Join(parts, "/")
}
