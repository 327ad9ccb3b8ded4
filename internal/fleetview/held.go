package fleetview

import (
	"net/url"
	"path"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/kalypso-gitops/kalypso/internal/envref"
	"github.com/kalypso-gitops/kalypso/internal/gitcache"
	"github.com/kalypso-gitops/kalypso/internal/plural"
	"github.com/kalypso-gitops/kalypso/render"
)

// States of an environment's last render (the State field of Render) and of an assignment.
const (
	RenderOK      = "ok"      // rendered without an error
	RenderError   = "error"   // rendered with errors: what they touch is held back
	RenderUnknown = "unknown" // not rendered by this replica yet

	AssignmentRendered = "rendered" // its new output is what the app proposes
	AssignmentFailed   = "failed"   // it did not render and has no output in GitOps yet
	AssignmentHeld     = "held"     // it did not render (or its inputs are broken): its last good output stays
)

// maxFolders bounds the assignment folders read from a GitOps branch to find the held ones.
const maxFolders = 200_000

// renderOf sums up a render: its errors, the assignments held back and the environment
// branch commit it read.
func renderOf(res *render.Result, held int, commit *Commit) Render {
	if len(res.Errors) == 0 {
		return Render{State: RenderOK, Held: held, Commit: commit}
	}
	return Render{State: RenderError, Errors: len(res.Errors), Held: held, Commit: commit,
		Summary: plural.Count(len(res.Errors), "error") + ", changes held back"}
}

// markHeld marks the assignments of env whose last good output stays in the GitOps branch,
// and adds those the render no longer lists (their cluster type is broken, or the
// environment's objects could not all be read): they are held, not dropped.
func (s Sources) markHeld(env *Environment, info envref.EnvInfo, res *render.Result) int {
	if len(res.Errors) == 0 && len(res.Failed) == 0 && !res.Snapshot.Incomplete {
		return 0
	}
	held := res.HeldBack(deployedFolders(s.Repos, info.GitOps, info.GitOpsBranch, res.Root))
	listed := map[string]int{}
	for i, a := range env.Assignments {
		listed[a.ClusterType+"/"+a.Target] = i
	}
	for _, key := range held {
		if i, ok := listed[key]; ok {
			env.Assignments[i].State = AssignmentHeld
			continue
		}
		ct, target := path.Split(key)
		folder := path.Join(res.Root, key)
		env.Assignments = append(env.Assignments, Assignment{ClusterType: path.Clean(ct), Target: target, Folder: folder, State: AssignmentHeld,
			URL: s.repoURL(info.GitOps.String()) + "/tree/" + url.PathEscape(info.GitOpsBranch) + "/" + escapePath(folder)})
	}
	return len(held)
}

// deployedFolders lists the assignment folders ("<clusterType>/<target>") below root at the
// head of a GitOps branch, as the app's local clone has it; none when it has not fetched it.
func deployedFolders(repos Repos, gitops envref.Repo, branch, root string) []string {
	if repos == nil || gitops.Name == "" {
		return nil
	}
	var out []string
	_ = repos.UseCached(gitcache.Remote{Owner: gitops.Owner, Name: gitops.Name}, func(s *gitcache.Session) error {
		out = foldersAt(s.Repo, s.Head(branch), root)
		return nil
	})
	return out
}

// foldersAt lists the folders two levels below root in a commit's tree, at most maxFolders.
func foldersAt(repo *git.Repository, head plumbing.Hash, root string) []string {
	if head.IsZero() {
		return nil
	}
	c, err := repo.CommitObject(head)
	if err != nil {
		return nil
	}
	t, err := c.Tree()
	if err == nil && root != "" {
		t, err = t.Tree(root)
	}
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range t.Entries {
		if e.Mode != filemode.Dir {
			continue
		}
		sub, err := repo.TreeObject(e.Hash)
		if err != nil {
			continue
		}
		for _, f := range sub.Entries {
			if f.Mode == filemode.Dir && len(out) < maxFolders {
				out = append(out, e.Name+"/"+f.Name)
			}
		}
	}
	return out
}
