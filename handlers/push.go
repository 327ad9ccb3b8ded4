package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/internal/gitsource"
)

// pushHead is what the push route reads of a push webhook: not the commits and their file
// lists, which can be large (the app's own pushes to a GitOps repository list every file
// they change, up to GitHub's 25 MB cap on payloads) and are not needed to route it.
type pushHead struct {
	Ref     string `json:"ref"`
	Deleted bool   `json:"deleted"`
	Sender  struct {
		Login string `json:"login"`
	} `json:"sender"`
	Repo struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
			Name  string `json:"name"`
		} `json:"owner"`
	} `json:"repository"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

// routePush names the branch a push moved. Deleted branches and tags name nothing; the app's
// own pushes (kalypso/<env>, pins) are echoes: whoever pushed already queued what follows.
func (c *Core) routePush(ctx context.Context, payload []byte) (bool, error) {
	var ev pushHead
	if err := json.Unmarshal(payload, &ev); err != nil {
		return false, fmt.Errorf("parse push event: %w", err)
	}
	if c.fromSelf(&github.User{Login: &ev.Sender.Login}) {
		return true, nil
	}
	branch, ok := strings.CutPrefix(ev.Ref, "refs/heads/")
	if !ok || ev.Deleted {
		return false, nil
	}
	owner := ev.Repo.Owner
	repo := repoOf(&github.Repository{Owner: &github.User{Login: &owner.Login, Name: &owner.Name}, Name: &ev.Repo.Name})
	if branch == gitsource.MainBranch && !c.Index.Declared(repo) && declaresEnvironments(payload) {
		zerolog.Ctx(ctx).Warn().Str("repository", repo.String()).
			Msg("repository changes .environments/ but is not a declared control plane (setting controlPlanes); ignored")
	}
	return false, c.Queue.Add(ctx, BranchKey(ev.Installation.ID, repo, branch), nil)
}

// pushFiles is the commits of a push webhook, each path read only for whether it is in
// .environments/ (one byte kept per path).
type pushFiles struct {
	Commits []struct {
		Added    []environmentsPath `json:"added"`
		Modified []environmentsPath `json:"modified"`
		Removed  []environmentsPath `json:"removed"`
	} `json:"commits"`
}

// environmentsPath is a path of a push's commit: whether it is in .environments/.
type environmentsPath bool

// UnmarshalJSON implements json.Unmarshaler, keeping nothing of the path but that.
func (p *environmentsPath) UnmarshalJSON(data []byte) error {
	if len(data) >= 2 && data[0] == '"' && bytes.IndexByte(data, '\\') < 0 { // no escapes: the bytes are the path
		*p = environmentsPath(bytes.HasPrefix(data[1:], []byte(".environments/")))
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*p = environmentsPath(strings.HasPrefix(s, ".environments/"))
	return nil
}

// declaresEnvironments reports whether a push webhook's payload adds, changes or removes a
// file in .environments/ (false for a payload it cannot read).
func declaresEnvironments(payload []byte) bool {
	var ev pushFiles
	if json.Unmarshal(payload, &ev) != nil {
		return false
	}
	for _, c := range ev.Commits {
		for _, files := range [][]environmentsPath{c.Added, c.Modified, c.Removed} {
			for _, f := range files {
				if f {
					return true
				}
			}
		}
	}
	return false
}
