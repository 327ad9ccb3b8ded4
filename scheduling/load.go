package scheduling

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Inputs are the sources an environment is computed from.
type Inputs struct {
	Environment string         // the environment's name (its namespace in the reference)
	Env         Source         // the environment branch of the control-plane repo
	Main        Source         // main at the commit the environment's BaseRepo pins
	Workloads   WorkloadSource // the registered workload repositories
	Policy      Policy         // limits on what is read and what workload repositories may say
	// Seniority tells how long a registration has existed (smaller is older). When two
	// registrations deliver Workloads or deployment targets of the same name, the older one
	// keeps it and the newer one gets the error, so that no team can take over another's names.
	// Without it (no history), neither keeps the name: both are errors and keep their last output.
	Seniority func(*WorkloadRegistration) int64
	// Cache, when set, keeps the files parsed by the previous load made with it: only files
	// whose content changed are parsed again (see ParseCache). The result is the same.
	Cache *ParseCache
}

// SourceCommit records which commit of which source an environment was computed from.
type SourceCommit struct {
	Name   string // e.g. "main", "dev", "workload platform-svc"
	Repo   string
	Branch string
	Commit string
}

// Snapshot is the control-plane model of one environment, as the reference sees its namespace.
type Snapshot struct {
	Environment   string
	GitOpsRepo    *GitOpsRepo
	BaseRepo      *BaseRepo
	ClusterTypes  []*ClusterType // sorted by name
	Templates     map[string]*Template
	Policies      []*SchedulingPolicy // sorted by name
	ConfigMaps    []*ConfigMap        // sorted by name
	ConfigSchemas []*ConfigSchema     // sorted by name
	Registrations []*WorkloadRegistration
	Workloads     []*Workload
	Targets       []*DeploymentTarget // this environment's deployment targets, sorted by name
	Broken        []*Object           // objects that failed validation
	// UnusableTemplates are broken Templates whose spec could be read: never used, their
	// manifests are parsed only to report their own errors (a template's syntax error is not
	// hidden by a bad label).
	UnusableTemplates []*Template
	// Incomplete is set when objects that decide which assignments exist could not be read:
	// then nothing that exists in the GitOps repo may be removed.
	Incomplete bool
	Sources    []SourceCommit
	Errors     Errors
}

// Load reads an environment's sources into a snapshot. Problems are collected in the
// snapshot's Errors; only what depends on a broken object is affected.
func Load(in Inputs) *Snapshot {
	snap := &Snapshot{Environment: in.Environment, Templates: map[string]*Template{}}
	l := newLoader(in.Policy, &snap.Errors).withCache(in.Cache)
	defer l.stop()
	var objs objects
	l.read(in.Env, "", &objs, &snap.Incomplete)
	snap.Sources = append(snap.Sources, SourceCommit{Name: in.Env.Name, Commit: in.Env.Commit})
	snap.BaseRepo = pickBaseRepo(objs.baseRepos, &snap.Errors)
	if snap.BaseRepo != nil && in.Main.FS != nil {
		dir, err := SubPath(snap.BaseRepo.Spec.Path)
		if err != nil {
			snap.Errors.Add(snap.BaseRepo.At("spec.path"), snap.BaseRepo.Ref(), "%v", err)
			snap.Incomplete = true
		} else {
			l.read(in.Main, dir, &objs, &snap.Incomplete)
		}
		snap.Sources = append(snap.Sources, SourceCommit{Name: in.Main.Name, Repo: snap.BaseRepo.Spec.Repo,
			Branch: snap.BaseRepo.Spec.Branch, Commit: in.Main.Commit})
	}
	snap.GitOpsRepo = pickGitOpsRepo(objs.gitopsRepos, &snap.Errors)
	loadWorkloads(snap, &objs, in.Workloads, l)
	if in.Seniority == nil {
		var contested []*Object
		objs.workloads, contested = withoutContested(objs.workloads, &snap.Errors, l.checks, l.names)
		objs.broken = append(objs.broken, contested...)
	} else {
		bySeniority(objs.workloads, in.Seniority, l.checks, l.names)
	}
	assemble(snap, &objs, l.pol, l.checks)
	snap.Errors = snap.Errors.Sorted().CapPerFile(MaxErrorsPerFile)
	return snap
}

// read loads a source into objs and marks the snapshot incomplete when it was not read whole.
func (l *loader) read(src Source, dir string, objs *objects, incomplete *bool) {
	if !l.source(src, dir, objs) {
		*incomplete = true
	}
}

func pickBaseRepo(repos []*BaseRepo, errs *Errors) *BaseRepo {
	var main *BaseRepo
	for _, r := range repos {
		switch {
		case r.Name != "main":
			errs.Add(r.Pos, r.Ref(), "only the BaseRepo named \"main\" is read; this one is ignored")
		case main != nil:
			errs.Add(r.Pos, r.Ref(), "BaseRepo \"main\" is also defined at %s", main.Pos)
		default:
			main = r
		}
	}
	return main
}

func pickGitOpsRepo(repos []*GitOpsRepo, errs *Errors) *GitOpsRepo {
	if len(repos) == 0 {
		return nil
	}
	for _, r := range repos[1:] {
		errs.Add(r.Pos, r.Ref(), "only one GitOpsRepo per environment is supported; %s is used", repos[0].Ref())
	}
	return repos[0]
}

// loadWorkloads reads the workloads each registration points at: every repository is listed
// and read first, all their files are parsed together (on every core), and the workloads are
// then added registration by registration, in the order of their names.
func loadWorkloads(snap *Snapshot, objs *objects, ws WorkloadSource, l *loader) {
	regs := dedupe(objs.registrations, &snap.Errors)
	sort.Slice(regs, func(i, j int) bool { return regs[i].Name < regs[j].Name })
	snap.Registrations = regs
	opened := make([]openedWorkload, len(regs))
	read := make([]*readSource, 0, len(regs))
	for i, reg := range regs {
		if opened[i] = openWorkload(ws, reg, l); opened[i].files != nil {
			read = append(read, opened[i].files)
		}
	}
	l.parseAll(read...)
	for i, reg := range regs {
		addWorkloads(snap, objs, reg, opened[i], l)
	}
}

// openedWorkload is the repository of a registration, listed and read; or why it cannot be,
// and where to say so.
type openedWorkload struct {
	src   Source
	files *readSource
	err   error
	at    Pos
}

// openWorkload finds the repository a registration points at and reads its files.
func openWorkload(ws WorkloadSource, reg *WorkloadRegistration, l *loader) openedWorkload {
	if ws == nil {
		return openedWorkload{err: fmt.Errorf("no workload repositories are available to read %s", reg.Spec.Workload.Repo), at: reg.Pos}
	}
	spec := reg.Spec.Workload
	dir, err := SubPath(spec.Path)
	var src Source
	if err == nil {
		src, err = ws.Workload(spec)
	}
	if err != nil {
		return openedWorkload{err: fmt.Errorf("cannot read the workload: %w", err), at: reg.At("spec.workload")}
	}
	return openedWorkload{src: src, files: l.gather(src, dir)}
}

// addWorkloads adds the workloads a registration delivered, or the error that it did not.
func addWorkloads(snap *Snapshot, objs *objects, reg *WorkloadRegistration, o openedWorkload, l *loader) {
	if o.err != nil {
		snap.Errors.Add(o.at, reg.Ref(), "%v", o.err)
		snap.Incomplete = true
		return
	}
	var found objects
	if !l.addFiles(o.files, &found) {
		snap.Incomplete = true
	}
	found.keepOnlyWorkloads(&snap.Errors)
	for _, w := range found.workloads {
		w.Registration = reg
		w.Labels["kustomize.toolkit.fluxcd.io/name"] = snap.Environment + "-" + reg.Name
		w.Labels["kustomize.toolkit.fluxcd.io/namespace"] = "flux-system"
	}
	objs.workloads = append(objs.workloads, found.workloads...)
	objs.broken = append(objs.broken, found.broken...)
	objs.unreadable = objs.unreadable || found.unreadable
	spec := reg.Spec.Workload
	snap.Sources = append(snap.Sources, SourceCommit{Name: "workload " + reg.Name, Repo: spec.Repo, Branch: spec.Branch, Commit: o.src.Commit})
}

// named is any loaded object.
type named interface{ obj() *Object }

func (o *Object) obj() *Object { return o }

// dedupe keeps the first object of each name and reports the others.
func dedupe[T named](list []T, errs *Errors) []T {
	seen := make(map[string]*Object, len(list))
	out := list[:0:0]
	if len(list) > 0 {
		out = make([]T, 0, len(list))
	}
	for _, x := range list {
		o := x.obj()
		if first, ok := seen[o.Name]; ok {
			errs.Add(o.Pos, o.Ref(), "%s is also defined at %s; this definition is ignored", o.Ref(), first.Pos)
			continue
		}
		seen[o.Name] = o
		out = append(out, x)
	}
	return out
}

// sortByName sorts a list by name, stably; a list sorted already is only checked.
func sortByName[T named](list []T) []T {
	byName := func(a, b T) int { return strings.Compare(a.obj().Name, b.obj().Name) }
	if !slices.IsSortedFunc(list, byName) {
		slices.SortStableFunc(list, byName)
	}
	return list
}

// setKinds decide which assignments exist; a broken one makes the snapshot incomplete.
var setKinds = map[string]bool{KindClusterType: true, KindSchedulingPolicy: true, KindWorkload: true,
	KindWorkloadRegistration: true, KindDeploymentTarget: true, KindGitOpsRepo: true, KindBaseRepo: true}

// assemble de-duplicates the objects, derives deployment targets and fills the snapshot.
func assemble(snap *Snapshot, objs *objects, pol Policy, checks map[*Workload]*targetChecks) {
	snap.ClusterTypes = sortByName(dedupe(objs.clusterTypes, &snap.Errors))
	for _, t := range dedupe(objs.templates, &snap.Errors) {
		snap.Templates[t.Name] = t
	}
	snap.Policies = sortByName(dedupe(objs.policies, &snap.Errors))
	snap.ConfigMaps = sortByName(dedupe(objs.configMaps, &snap.Errors))
	snap.ConfigSchemas = sortByName(dedupe(objs.schemas, &snap.Errors))
	snap.Workloads = dedupe(objs.workloads, &snap.Errors)
	snap.Targets = deploymentTargets(snap, objs.targets, pol, checks)
	snap.Broken = objs.broken
	snap.UnusableTemplates = objs.unusableTemplates
	validatePolicies(snap)
	snap.Incomplete = snap.Incomplete || objs.unreadable
	for _, b := range snap.Broken {
		if setKinds[b.Kind] {
			snap.Incomplete = true
		}
	}
	if snap.GitOpsRepo == nil {
		snap.Errors.Add(Pos{File: snap.Environment}, "", "environment %q has no GitOpsRepo", snap.Environment)
	}
}

// deploymentTargets derives this environment's targets from the workloads, as the reference's
// Workload controller does, and adds the ones written directly. A workload copied from a parse
// cache has its targets checked once (checks).
func deploymentTargets(snap *Snapshot, authored []*DeploymentTarget, pol Policy, checks map[*Workload]*targetChecks) []*DeploymentTarget {
	n := len(authored)
	for _, w := range snap.Workloads {
		n += len(w.Spec.DeploymentTargets)
	}
	var out []*DeploymentTarget
	if n > 0 {
		out = make([]*DeploymentTarget, 0, n)
	}
	for _, w := range snap.Workloads {
		bad, anyBad := checks[w].validate(w, &snap.Errors, pol)
		if anyBad {
			snap.Incomplete = true // the target may exist under a name we cannot read
		}
		out = checks[w].targets(w, snap.Environment, bad, out)
	}
	for _, t := range authored {
		if t.Environment == snap.Environment {
			out = append(out, t)
		}
	}
	return dedupeTargets(sortByName(out), &snap.Errors)
}

// dedupeTargets keeps the first target of each name of a list sorted by name (stably: the
// first of a name is the first produced) and reports the others.
func dedupeTargets(list []*DeploymentTarget, errs *Errors) []*DeploymentTarget {
	out := list[:0] // in place: the kept never outrun the read
	for i, t := range list {
		if i > 0 && t.Name == out[len(out)-1].Name {
			errs.Add(t.Pos, t.Ref(), "deployment target name %q is also produced at %s; this one is ignored", t.Name, out[len(out)-1].Pos)
			continue
		}
		out = append(out, t)
	}
	return out
}

// workspaceOf is the workspace of w's registration ("" without one).
func workspaceOf(w *Workload) string {
	if w.Registration == nil {
		return ""
	}
	return w.Registration.Spec.Workspace
}

// targetPos is where target i of a workload is written: the line of its name and of each of
// its manifests' values.
type targetPos struct {
	line  int
	lines map[string]int // "spec.manifests.KEY" → line, as for a DeploymentTarget written directly
}

// targetPosOf finds where target i of w is written.
func targetPosOf(w *Workload, i int) targetPos {
	path := "spec.deploymentTargets[" + strconv.Itoa(i) + "]"
	t := w.Spec.DeploymentTargets[i]
	pos := targetPos{line: w.At(path + ".name").Line, lines: make(map[string]int, len(t.Manifests))}
	values := path + ".manifests."
	for k := range t.Manifests {
		pos.lines["spec.manifests."+k] = w.At(values + k).Line
	}
	return pos
}

// workloadTarget builds the deployment target of target i of w, written at pos, with the
// reference's labels: target labels, overwritten by the workload's labels, then `workload`
// and `workspace`.
func workloadTarget(w *Workload, i int, t TargetSpec, pos targetPos) *DeploymentTarget {
	labels := make(map[string]string, len(t.Labels)+len(w.Labels)+2)
	for k, v := range t.Labels {
		labels[k] = v
	}
	for k, v := range w.Labels {
		labels[k] = v
	}
	workspace := workspaceOf(w)
	labels["workload"] = w.Name
	labels["workspace"] = workspace
	schemas := append(append([]string(nil), t.ConfigSchemas...), w.Spec.ConfigSchemas...)
	return &DeploymentTarget{
		Object:        Object{Kind: KindDeploymentTarget, Name: TargetName(w.Name, t.Name), Labels: labels, Pos: Pos{File: w.Pos.File, Line: pos.line}, lines: pos.lines},
		Workload:      w.Name,
		Workspace:     workspace,
		Environment:   t.Environment,
		Manifests:     t.Manifests,
		ConfigSchemas: schemas,
	}
}
