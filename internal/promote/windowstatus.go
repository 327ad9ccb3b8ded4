package promote

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/kalypso-gitops/kalypso/internal/ellipsis"
	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// WindowContext is the commit status an environment's GitOps pull request carries: success
// while its promotion windows are open (or an admin overrode them for the pin it proposes),
// pending while they are closed. A branch protection rule that requires it holds a human
// merge as well.
const WindowContext = "kalypso/window"

// windowStatuses remembers the kalypso/window status last posted on each pull request head,
// so that an unchanged verdict is not posted again.
type windowStatuses struct {
	mu     sync.Mutex
	posted map[string]string // "<repo>@<sha>" → state and description
}

// changed records want for key and reports whether it differs from what was posted.
func (w *windowStatuses) changed(key, want string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.posted[key] == want {
		return false
	}
	w.posted[key] = want
	return true
}

// forget drops a record whose post failed.
func (w *windowStatuses) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.posted, key)
}

// postWindowStatus writes kalypso/window on the head of the environment's open GitOps pull
// request, and returns how long until the verdict changes (0: never by itself).
func (p *Promoter) postWindowStatus(ctx context.Context, info envref.EnvInfo, s *scheduling.Stage, override string) (time.Duration, error) {
	gh, err := p.clients.Client(ctx, info.Env.Installation)
	if err != nil {
		return 0, err
	}
	prs, err := gh.OpenPullRequests(ctx, info.GitOps, envref.AppBranch(info.Env.Name), info.GitOpsBranch)
	if err != nil || len(prs) == 0 {
		return 0, err
	}
	v := p.verdict(s)
	state, desc := "success", v.Short()
	switch {
	case !v.Open && override != "":
		desc = "overridden by @" + override + "; " + v.Short()
	case !v.Open:
		state = "pending"
	}
	head := prs[0].GetHead().GetSHA()
	key := info.GitOps.String() + "@" + head
	if p.windows.changed(key, state+" "+desc) {
		err := gh.CreateStatus(ctx, info.GitOps, head, &github.RepoStatus{State: &state, Context: github.String(WindowContext),
			Description: github.String(ellipsis.Cut(desc, 140))})
		if err != nil {
			p.windows.forget(key)
			return 0, fmt.Errorf("status %s on %s@%s: %w", WindowContext, info.GitOps, short(head), err)
		}
	}
	if v.By == nil {
		return 0, nil
	}
	return p.again(v), nil
}

// overriddenBy says who overrode the windows for the pin at the head of the environment's
// branch, and why when they said: "alice" or "alice: reason" ("" when nobody did: a later
// commit on the branch is held again).
func overriddenBy(s *gitcache.Session, st *scheduling.Stage) string {
	c, err := s.Repo.CommitObject(gitcache.Head(s.Repo, st.Env.Spec.ControlPlane.Branch))
	if err != nil {
		return ""
	}
	var who, why string
	for _, line := range strings.Split(c.Message, "\n") {
		if w, ok := strings.CutPrefix(line, overrideTrailer+"@"); ok {
			who = strings.TrimSpace(w)
		} else if w, ok := strings.CutPrefix(line, overrideReasonTrailer); ok {
			why = strings.TrimSpace(w)
		}
	}
	if who != "" && why != "" {
		return who + ": " + why
	}
	return who
}
