package promote

import "github.com/kalypso-gitops/kalypso/internal/envref"

// Locator names the state of one promotion: a main commit of a control plane of an
// installation, on its way into (or deployed to) an environment.
type Locator struct {
	Installation int64
	ControlPlane envref.Repo
	Env          string // the environment ("" for main itself)
	Commit       string // the main commit
}

// locate names the promotion of a main commit into an environment known to the index.
func locate(env envref.Env, commit string) Locator {
	return Locator{Installation: env.Installation, ControlPlane: env.ControlPlane, Env: env.Name, Commit: commit}
}

// In is the same commit in another environment.
func (l Locator) In(env string) Locator { l.Env = env; return l }

// At is another commit in the same environment.
func (l Locator) At(commit string) Locator { l.Commit = commit; return l }

// key identifies the environment of the promotion within the installation.
func (l Locator) key() string { return l.ControlPlane.String() + "/" + l.Env }
