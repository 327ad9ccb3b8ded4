package render_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

// world is a small control plane kept as data, written out as files before every load, so
// that random edits of any object can be made and undone.
type world struct {
	rng        *rand.Rand
	commit     int    // the pinned main commit, as a number
	gitops     string // GitOpsRepo spec.path; "-" when there is no GitOpsRepo
	cts        map[string]*ctObj
	templates  map[string]*tplObj
	configs    map[string]*cmObj
	schemas    map[string]*schemaObj
	policies   map[string]*policyObj
	workloads  map[string]*workloadObj
	authored   map[string]*authoredObj
	broken     map[string]string // file path → how it is broken: "syntax" or "field"
	shift      map[string]int    // file path → blank lines put before the document
	nextSerial int
}

type ctObj struct {
	labels                        map[string]string
	reconciler, namespace, config string
}

type tplObj struct {
	role, contentType string
	bodies            []string
}

type cmObj struct {
	labels map[string]string
	data   map[string]string
}

type schemaObj struct {
	labels map[string]string
	schema string
}

type policyObj struct {
	workspace            string
	targets, clusterType string // label selector bodies in flow style
}

type workloadObj struct {
	workspace, branch string
	labels            map[string]string
	schemas           []string
	targets           []*targetObj
}

type targetObj struct {
	name, environment string
	labels            map[string]string
	path              string
	schemas           []string
}

type authoredObj struct {
	labels map[string]string
	path   string
}

const apiVersion = "apiVersion: scheduler.kalypso.io/v1alpha1\n"

// files writes the world out as the environment branch, main and the workload repositories.
func (w *world) files() (env, main, workloads fstest.MapFS) {
	env, main, workloads = fstest.MapFS{}, fstest.MapFS{}, fstest.MapFS{}
	put := func(fsys fstest.MapFS, path, text string) {
		text = strings.Repeat("\n", w.shift[path]) + mangle(text, w.broken[path])
		fsys[path] = &fstest.MapFile{Data: []byte(text)}
	}
	put(env, "base-repo.yaml", apiVersion+"kind: BaseRepo\nmetadata:\n  name: main\nspec:\n  repo: https://github.com/org/cp\n  branch: main\n  path: .\n"+
		fmt.Sprintf("  commit: \"c%039x\"\n", w.commit))
	if w.gitops != "-" {
		put(env, "gitops-repo.yaml", apiVersion+"kind: GitOpsRepo\nmetadata:\n  name: dev\nspec:\n  repo: https://github.com/org/gitops\n  branch: dev\n  path: "+w.gitops+"\n")
	}
	for name, o := range w.cts {
		put(env, "cluster-types/"+name+".yaml", header("ClusterType", name, o.labels)+
			fmt.Sprintf("spec:\n  reconciler: %s\n  namespaceService: %s\n  configType: %s\n", o.reconciler, o.namespace, o.config))
	}
	for name, o := range w.templates {
		put(main, "templates/"+name+".yaml", o.yaml(name))
	}
	for name, o := range w.configs {
		put(env, "configs/"+name+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\n"+labelBlock(o.labels, "  ")+"data:\n"+mapBlock(o.data))
	}
	for name, o := range w.schemas {
		put(env, "schemas/"+name+".yaml", header("ConfigSchema", name, o.labels)+fmt.Sprintf("spec:\n  schema: %q\n", o.schema))
	}
	for name, o := range w.policies {
		put(env, "policies/"+name+".yaml", o.yaml(name))
	}
	for name, o := range w.authored {
		put(env, "targets/"+name+".yaml", header("DeploymentTarget", name, o.labels)+
			"spec:\n  environment: dev\n  manifests: {repo: https://github.com/org/solo, branch: dev, path: "+o.path+"}\n")
	}
	for name, o := range w.workloads {
		put(main, "workloads/"+name+".yaml", header("WorkloadRegistration", name, nil)+
			"spec:\n  workload:\n    repo: https://github.com/org/"+name+"\n    branch: "+o.branch+"\n    path: ./wl\n  workspace: "+o.workspace+"\n")
		put(workloads, "org/"+name+"/main/wl/workload.yaml", o.yaml(name))
	}
	return env, main, workloads
}

// inputs loads the world as environment "dev"; as in the app, positions in main name the
// pinned commit, so a new pin moves every object of main.
func (w *world) inputs() scheduling.Inputs {
	env, main, workloads := w.files()
	return scheduling.Inputs{
		Environment: "dev",
		Env:         scheduling.Source{FS: env, Name: "dev", Prefix: "dev:", Commit: "env"},
		Main:        scheduling.Source{FS: main, Name: "main", Prefix: fmt.Sprintf("main@%d:", w.commit), Commit: fmt.Sprintf("c%039x", w.commit)},
		Workloads:   scheduling.TreeWorkloads(workloads, "workloads:"),
	}
}

func header(kind, name string, labels map[string]string) string {
	return apiVersion + "kind: " + kind + "\nmetadata:\n  name: " + name + "\n" + labelBlock(labels, "  ")
}

func labelBlock(labels map[string]string, indent string) string {
	if len(labels) == 0 {
		return ""
	}
	return indent + "labels:\n" + indentLines(mapBlock(labels), indent)
}

// mapBlock writes a map of strings as sorted YAML lines, multi-line values as literal blocks.
func mapBlock(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		v := m[k]
		if !strings.Contains(v, "\n") {
			fmt.Fprintf(&b, "  %q: %q\n", k, v)
			continue
		}
		fmt.Fprintf(&b, "  %q: |\n%s", k, indentLines(v, "    "))
	}
	return b.String()
}

func indentLines(text, indent string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
		b.WriteString(indent + strings.TrimSuffix(line, "\n") + "\n")
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mangle breaks a document: a YAML syntax error, or an unknown field (labels still readable).
func mangle(text, how string) string {
	switch how {
	case "syntax":
		return strings.Replace(text, "metadata:\n", "metadata:\n  bad: [unclosed\n", 1)
	case "field":
		return text + "bogus: 1\n"
	}
	return text
}

func (o *tplObj) yaml(name string) string {
	var b strings.Builder
	b.WriteString(header("Template", name, nil) + "spec:\n  type: " + o.role + "\n")
	if o.contentType != "" {
		b.WriteString("  contentType: " + o.contentType + "\n")
	}
	b.WriteString("  manifests:\n")
	for _, body := range o.bodies {
		b.WriteString("    - |\n" + indentLines(body, "      "))
	}
	return b.String()
}

func (o *policyObj) yaml(name string) string {
	ws := ""
	if o.workspace != "" {
		ws = "    workspace: " + o.workspace + "\n"
	}
	return header("SchedulingPolicy", name, nil) + "spec:\n  deploymentTargetSelector:\n" + ws +
		"    labelSelector: " + o.targets + "\n  clusterTypeSelector:\n    labelSelector: " + o.clusterType + "\n"
}

func (o *workloadObj) yaml(name string) string {
	var b strings.Builder
	b.WriteString(header("Workload", name, o.labels) + "spec:\n")
	if len(o.schemas) > 0 {
		b.WriteString("  configSchemas:\n" + quotedList(o.schemas, "    "))
	}
	b.WriteString("  deploymentTargets:\n")
	for _, t := range o.targets {
		fmt.Fprintf(&b, "    - name: %s\n      environment: %s\n", t.name, t.environment)
		b.WriteString(labelBlock(t.labels, "      "))
		fmt.Fprintf(&b, "      manifests: {repo: https://github.com/org/%s-gitops, branch: dev, path: %s}\n", name, t.path)
		if len(t.schemas) > 0 {
			b.WriteString("      configSchemas:\n" + quotedList(t.schemas, "        "))
		}
	}
	return b.String()
}

func quotedList(items []string, indent string) string {
	var b strings.Builder
	for _, s := range items {
		fmt.Fprintf(&b, "%s- %q\n", indent, s)
	}
	return b.String()
}

// pick returns a random element of a list.
func pick[T any](rng *rand.Rand, list []T) T { return list[rng.IntN(len(list))] }

// pickName returns a random key of a map, "" when it is empty; keys are sorted first so that
// a seed always makes the same choices.
func pickName[V any](rng *rand.Rand, m map[string]V) string {
	if len(m) == 0 {
		return ""
	}
	return pick(rng, sortedKeys(m))
}

func (w *world) serial(prefix string) string {
	w.nextSerial++
	return fmt.Sprintf("%s-%d", prefix, w.nextSerial)
}
