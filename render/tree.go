package render

import (
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// ReadmeText is the content of every cluster-type folder's README.md (no trailing newline).
const ReadmeText = "This folder contains deployment targets scheduled on the cluster type"

// PromotedCommitPath is where the promoted main commit is recorded, below the GitOps path.
const PromotedCommitPath = ".github/tracking/Promoted_Commit_Id"

// Tree is a GitOps tree: slash-separated path → file content.
type Tree map[string][]byte

// Result is an environment scheduled and rendered.
type Result struct {
	Snapshot    *scheduling.Snapshot
	Root        string // the GitOps path below which the app writes ("" for the repository root)
	HasTarget   bool   // false when the environment has no usable GitOpsRepo: nothing may be written
	Assignments []*scheduling.Assignment
	Outputs     Outputs                      // assignment key → its files
	Failed      map[string]*scheduling.Error // assignment key → why it did not render
	Errors      scheduling.Errors            // every problem: loading, scheduling and rendering
	// Since says which result this one was computed from and which assignments may differ
	// from it; the zero value for a result rendered whole.
	Since Lineage
	// templates are the templates its engine compiled, whose parsed manifests the engine of a
	// later snapshot may take (see Incremental).
	templates map[string]*compiledTemplate
	// targets are the escaped values of the deployment targets of the environment rendered
	// whole that this result comes from, which the engines of later snapshots use for the
	// targets that did not change; read only. Its targets stay alive until the environment is
	// rendered whole again.
	targets map[*scheduling.DeploymentTarget]*targetValues
	// configValues are the config values its engine parsed, by their text; read only.
	configValues map[string]any
	// matches are the snapshot's policies evaluated, which a later snapshot's evaluation takes
	// what did not change from (scheduling.MatchPoliciesSince).
	matches *scheduling.PolicyMatches
	// composed is what its engine parsed and composed of the platform config; read only.
	composed *configMemory
	// rows give where the assignments of each cluster type of the snapshot start, as
	// scheduling.Rescheduled.Rows does; nil when unknown.
	rows []int
}

// Lineage says what a result computed from an earlier one changed: every assignment not in
// Keys has exactly the output, or the failure, it had in From. It lets what is derived from
// the earlier result (such as the git trees of its folders) be brought up to date at the cost
// of the change. From is weak: a result does not keep the one it came from alive.
type Lineage struct {
	From weak.Pointer[Result]
	Keys []string // the assignments rendered again or removed, sorted
}

// Environment schedules a snapshot and renders every assignment, in parallel, within the
// limits of the options (DefaultLimits without).
func Environment(snap *scheduling.Snapshot, opts ...Option) *Result {
	res := &Result{Snapshot: snap, Failed: map[string]*scheduling.Error{}}
	res.Errors = append(res.Errors, snap.Errors...)
	if snap.GitOpsRepo != nil {
		root, err := scheduling.SubPath(snap.GitOpsRepo.Spec.Path)
		if err != nil {
			res.Errors.Add(snap.GitOpsRepo.At("spec.path"), snap.GitOpsRepo.Ref(), "%v", err)
		} else {
			res.Root, res.HasTarget = root, true
		}
	}
	res.matches = scheduling.MatchPolicies(snap)
	res.Assignments, res.rows = res.matches.Schedule()
	engine := NewEngine(snap, opts...)
	outputs := make(map[string]Files, len(res.Assignments))
	res.renderAll(engine, res.Assignments, outputs)
	res.Outputs = NewOutputs(outputs)
	res.templates, res.configValues, res.composed = engine.templates, engine.config.values, engine.configMemory()
	if !engine.expired.Load() {
		res.targets = engine.targetValues()
	}
	res.Errors = withFileErrors(res.Errors, snap, engine.templates).Sorted()
	return res
}

// renderAll renders assignments on all cores and records failures, and outputs. It returns by
// the engine's deadline: assignments not rendered by then fail with the timeout error, and
// what a worker still running delivers later is dropped.
func (r *Result) renderAll(e *Engine, list []*scheduling.Assignment, outputs map[string]Files) {
	c := newCollector(len(list))
	workers := min(runtime.GOMAXPROCS(0), len(list))
	finished := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.work(e, list)
		}()
	}
	go func() { wg.Wait(); close(finished) }()
	deadline := time.NewTimer(e.limits.Timeout)
	select {
	case <-finished:
		deadline.Stop()
	case <-deadline.C:
		e.expired.Store(true)
	}
	files, errs, keys := c.close()
	for i, a := range list {
		switch {
		case errs[i] != nil:
			r.Failed[a.Key()] = errs[i]
		case files[i].Len() == 0:
			r.Failed[a.Key()] = e.timeoutFailure(a)
		default:
			outputs[keys[i]] = files[i]
		}
	}
	r.Errors = append(r.Errors, groupFailures(list, r.Failed)...)
}

// collector hands out chunks of assignments to workers and gathers their results until it
// is closed.
type collector struct {
	mu     sync.Mutex
	next   int
	closed bool
	files  []Files
	errs   []*scheduling.Error
	keys   []string // the keys of the assignments rendered, made by the workers
}

// chunk is how many assignments a worker takes at a time.
const chunk = 64

func newCollector(n int) *collector {
	return &collector{files: make([]Files, n), errs: make([]*scheduling.Error, n), keys: make([]string, n)}
}

// work renders chunks of list until there are none left or the collector is closed.
func (c *collector) work(e *Engine, list []*scheduling.Assignment) {
	x := e.acquire()
	defer e.release(x)
	var files [chunk]Files
	var errs [chunk]*scheduling.Error
	var keys [chunk]string
	for {
		c.mu.Lock()
		i := c.next
		c.next += chunk
		stop := c.closed || e.expired.Load()
		c.mu.Unlock()
		if stop || i >= len(list) {
			return
		}
		end := min(i+chunk, len(list))
		for j := i; j < end; j++ {
			keys[j-i] = list[j].Key()
			files[j-i], errs[j-i] = x.render(list[j], keys[j-i])
		}
		c.mu.Lock()
		if !c.closed {
			copy(c.files[i:end], files[:end-i])
			copy(c.errs[i:end], errs[:end-i])
			copy(c.keys[i:end], keys[:end-i])
		}
		c.mu.Unlock()
	}
}

// close stops accepting results and returns them: files, errors and keys by assignment.
func (c *collector) close() ([]Files, []*scheduling.Error, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.files, c.errs, c.keys
}

// Apply returns the GitOps tree that should replace prev: every rendered assignment exactly,
// a README per cluster type, the promoted commit, and removed assignments gone. Only
// cluster-type folders are Kalypso's (see managedFolders); everything else that belongs to
// the GitOps repo (files outside the GitOps path, at its root, in dot-folders and in any other
// folder) is kept, and so is the last output of an assignment that failed, of a broken
// cluster type, and, when the snapshot is incomplete, of anything that may still exist.
func (r *Result) Apply(prev Tree) Tree {
	if !r.HasTarget {
		return prev
	}
	return r.Desired(prev).Tree()
}

func dirPrefix(root string) string {
	if root == "" {
		return ""
	}
	return root + "/"
}

// managedFolders returns the top-level folders below the GitOps path that Kalypso owns
// entirely: those of the snapshot's cluster types (broken ones included) and those whose
// README.md is the one Kalypso writes (cluster types removed since).
func (r *Result) managedFolders(prev Tree, prefix string) map[string]bool {
	managed := map[string]bool{}
	for _, ct := range r.Snapshot.ClusterTypes {
		managed[ct.Name] = true
	}
	for name := range r.brokenClusterTypes() {
		managed[name] = true
	}
	for p, c := range prev {
		rel, inside := strings.CutPrefix(p, prefix)
		folder, name, ok := strings.Cut(rel, "/")
		if inside && ok && name == "README.md" && string(c) == ReadmeText {
			managed[folder] = true
		}
	}
	return managed
}

// keeper decides, for a path relative to the GitOps path, whether its previous content stays.
func (r *Result) keeper(managed map[string]bool) func(rel string) bool {
	brokenCT := r.brokenClusterTypes()
	return func(rel string) bool {
		segs := strings.SplitN(rel, "/", 3)
		switch {
		case len(segs) == 1 || strings.HasPrefix(segs[0], ".") || !managed[segs[0]]:
			return true // the GitOps repo's own files
		case len(segs) == 3:
			return r.keepsFolder(segs[0], segs[1], brokenCT)
		case brokenCT[segs[0]]:
			return true
		default:
			return r.Snapshot.Incomplete
		}
	}
}

// keepsFolder decides whether the previous content of an assignment folder of a managed
// cluster type stays.
func (r *Result) keepsFolder(clusterType, target string, brokenCT map[string]bool) bool {
	key := clusterType + "/" + target
	switch {
	case r.Outputs.of(key).Len() > 0:
		return false // rewritten exactly
	case r.Failed[key] != nil:
		return true // last good output of a failing assignment
	case brokenCT[clusterType]:
		return true
	default:
		return r.Snapshot.Incomplete
	}
}

// brokenClusterTypes names the cluster types whose definitions are broken.
func (r *Result) brokenClusterTypes() map[string]bool {
	broken := map[string]bool{}
	for _, b := range r.Snapshot.Broken {
		if b.Kind == scheduling.KindClusterType {
			broken[b.Name] = true
		}
	}
	return broken
}

// SortedPaths returns the paths of a tree in order.
func (t Tree) SortedPaths() []string {
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}
