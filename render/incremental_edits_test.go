package render_test

import (
	"math/rand/v2"
	"strings"
)

// Vocabulary of the generated control planes.
var (
	ctLabelChoices = []map[string]string{
		{"region": "r0", "group": "g0"}, {"region": "r1", "group": "g1"}, {"region": "r0", "size": "s1", "group": "g2"},
		{"region": "r1", "size": "s0"}, {"size": "s1", "group": "g1"}, {"region": "r1", "group": "g0", "ring": "ring1"},
	}
	reconcilerBodies = []string{
		"kind: Kustomization\nname: {{ .DeploymentTargetName }}\nnamespace: {{ .Namespace }}\npath: {{ .Manifests.path }}",
		"kind: Application\nrepo: {{ .Manifests.repo }}\nring: {{ .Labels.ring }}\nworkspace: {{ .Workspace }}\nworkload: {{ .Workload }}",
		"{{ if eq (index .Labels \"ring\") \"ring2\" }}{{ fail \"ring2 is not allowed here\" }}{{ end }}name: {{ .DeploymentTargetName }}",
		"nested: {{ \"{{ .Workload }}\" }}\ncluster: {{ .ClusterType }}",
		"{{ if false }}never{{ end }}",
		"name: {{ .DeploymentTargetName",
	}
	namespaceBodies = []string{
		"kind: Namespace\nname: {{ .Namespace }}\nenvironment: {{ .Environment }}",
		"kind: Namespace\nname: {{ .Namespace }}\nlabels:\n{{ toYaml .Labels | indent 2 }}",
	}
	configBodies = []string{
		"kind: ConfigMap\ndata:\n{{ toYaml .ConfigData | indent 2 }}",
		"{{ stringify .ConfigData }}",
		"{{ if .ConfigData.NEVER }}x{{ end }}",
		"log: {{ .ConfigData.LOG | default \"none\" }}\nhash: {{ hash .ConfigData }}",
	}
	shBodies      = []string{"export LOG={{ .ConfigData.LOG }}\nexport REGION={{ .ConfigData.REGION }}"}
	configValues  = []string{"debug", "info", "- a\n- b\n", "a: 1\nb: x\n", "3", "x"}
	configKeys    = []string{"LOG", "REGION", "LIST", "MAP", "REPLICAS"}
	schemaTexts   = []string{`{"type":"object"}`, `{"type":"object","required":["LOG"]}`, `{"type":"object","properties":{"REPLICAS":{"type":"integer"}}}`, `{"type":"object","properties":{"LOG":{"enum":["debug","info"]}}}`, `not json`}
	targetSchemas = []string{`{"type":"object","required":["REGION"]}`, `{"type":"object","properties":{"LOG":{"type":"string"}}}`}
	targetSels    = []string{"{matchLabels: {tier: t0}}", "{matchLabels: {tier: t1}}", "{matchExpressions: [{key: ring, operator: NotIn, values: [ring2]}]}", "{matchLabels: {workspace: team-a}}", "{matchExpressions: [{key: ring, operator: Exists}]}"}
	clusterSels   = []string{"{matchLabels: {region: r0}}", "{matchLabels: {group: g1}}", "{matchExpressions: [{key: size, operator: In, values: [s0, s1]}]}", "{matchExpressions: [{key: region, operator: Exists}]}"}
	workspaces    = []string{"team-a", "team-b"}
)

// newWorld makes a small valid control plane.
func newWorld(seed uint64) *world {
	w := &world{rng: rand.New(rand.NewPCG(seed, 7)), commit: 1, gitops: ".", cts: map[string]*ctObj{}, templates: map[string]*tplObj{},
		configs: map[string]*cmObj{}, schemas: map[string]*schemaObj{}, policies: map[string]*policyObj{}, workloads: map[string]*workloadObj{},
		authored: map[string]*authoredObj{}, broken: map[string]string{}, shift: map[string]int{}}
	w.templates["rec-a"] = &tplObj{role: "reconciler", bodies: []string{reconcilerBodies[0], reconcilerBodies[1]}}
	w.templates["rec-b"] = &tplObj{role: "reconciler", bodies: []string{reconcilerBodies[3]}}
	w.templates["ns-a"] = &tplObj{role: "namespace", bodies: []string{namespaceBodies[0]}}
	w.templates["cfg-a"] = &tplObj{role: "config", bodies: []string{configBodies[0]}}
	w.templates["cfg-sh"] = &tplObj{role: "config", contentType: "sh", bodies: shBodies}
	for range 5 {
		w.addClusterType()
	}
	for range 4 {
		w.addWorkload()
	}
	w.policies["p-0"] = &policyObj{targets: targetSels[0], clusterType: clusterSels[0]}
	w.policies["p-1"] = &policyObj{targets: targetSels[1], clusterType: clusterSels[3]}
	w.policies["p-2"] = &policyObj{targets: targetSels[2], clusterType: clusterSels[1]}
	w.configs["c-env"] = &cmObj{labels: map[string]string{"platform-config": "true"}, data: map[string]string{"LOG": "info", "REPLICAS": "2"}}
	for range 3 {
		w.addConfig()
	}
	w.schemas["s-0"] = &schemaObj{labels: map[string]string{"region": "r1"}, schema: schemaTexts[2]}
	return w
}

func (w *world) templatesOf(role string) []string {
	var out []string
	for _, name := range sortedKeys(w.templates) {
		if w.templates[name].role == role {
			out = append(out, name)
		}
	}
	return append(out, "missing")
}

func (w *world) addClusterType() {
	w.cts[w.serial("ct")] = &ctObj{labels: copyLabels(pick(w.rng, ctLabelChoices)),
		reconciler: pick(w.rng, []string{"rec-a", "rec-b"}), namespace: "ns-a", config: pick(w.rng, []string{"cfg-a", "cfg-a", "cfg-sh"})}
}

func (w *world) addWorkload() {
	o := &workloadObj{workspace: pick(w.rng, workspaces), branch: "main", labels: map[string]string{"tier": pick(w.rng, []string{"t0", "t1"})}}
	for range 1 + w.rng.IntN(3) {
		o.targets = append(o.targets, w.newTarget())
	}
	w.workloads[w.serial("w")] = o
}

func (w *world) newTarget() *targetObj {
	return &targetObj{name: w.serial("t"), environment: "dev", labels: map[string]string{"ring": pick(w.rng, []string{"ring0", "ring1", "ring2"})}, path: "./" + w.serial("p")}
}

func (w *world) addConfig() {
	w.configs[w.serial("c")] = &cmObj{labels: w.configLabels(), data: w.configData()}
}

// configLabels picks labels that match a part of the fleet, platform config most of the time.
func (w *world) configLabels() map[string]string {
	choices := []map[string]string{{"region": "r0"}, {"region": "r1"}, {"size": "s1"}, {"ring": "ring1"}, {"tier": "t0"},
		{"region": "r0", "ring": "ring2"}, {"group": "g1", "tier": "t1"}, {"cluster-type": pickName(w.rng, w.cts)},
		{"workload": pickName(w.rng, w.workloads)}, {"deployment-target": w.someTarget()}, {}}
	labels := copyLabels(pick(w.rng, choices))
	if w.rng.IntN(8) > 0 {
		labels["platform-config"] = "true"
	}
	return labels
}

func (w *world) configData() map[string]string {
	data := map[string]string{}
	for range 1 + w.rng.IntN(3) {
		data[pick(w.rng, configKeys)] = pick(w.rng, configValues)
	}
	return data
}

func (w *world) someTarget() string {
	name := pickName(w.rng, w.workloads)
	if name == "" || len(w.workloads[name].targets) == 0 {
		return "none"
	}
	return name + "-" + pick(w.rng, w.workloads[name].targets).name
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// edit is one kind of random change; apply returns false when it cannot be made now.
type edit struct {
	kind, op string
	apply    func(w *world) bool
}

// edits is every kind of change the property test makes.
func edits() []edit {
	return []edit{
		{"ClusterType", "add", func(w *world) bool { w.addClusterType(); return true }},
		{"ClusterType", "remove", removeFrom(func(w *world) map[string]*ctObj { return w.cts })},
		{"ClusterType", "labels", func(w *world) bool {
			return w.withCT(func(o *ctObj) { o.labels = copyLabels(pick(w.rng, ctLabelChoices)) })
		}},
		{"ClusterType", "templates", func(w *world) bool {
			return w.withCT(func(o *ctObj) {
				switch w.rng.IntN(3) {
				case 0:
					o.reconciler = pick(w.rng, w.templatesOf("reconciler"))
				case 1:
					o.namespace = pick(w.rng, w.templatesOf("namespace"))
				default:
					o.config = pick(w.rng, w.templatesOf("config"))
				}
			})
		}},
		{"Template", "add", func(w *world) bool {
			name := w.serial("rec")
			w.templates[name] = &tplObj{role: "reconciler", bodies: []string{pick(w.rng, reconcilerBodies[:5])}}
			return w.withCT(func(o *ctObj) { o.reconciler = name })
		}},
		{"Template", "remove", func(w *world) bool {
			name := pickName(w.rng, w.templates)
			delete(w.templates, name)
			return name != ""
		}},
		{"Template", "change", func(w *world) bool {
			o := w.templates[pickName(w.rng, w.templates)]
			switch o.role {
			case "reconciler":
				o.bodies = []string{pick(w.rng, reconcilerBodies)}
			case "namespace":
				o.bodies = []string{pick(w.rng, namespaceBodies)}
			default:
				o.bodies = []string{pick(w.rng, append(configBodies, shBodies...))}
			}
			return true
		}},
		{"ConfigMap", "add", func(w *world) bool { w.addConfig(); return true }},
		{"ConfigMap", "add azure", func(w *world) bool {
			w.configs["azure-app-config-"+w.serial("a")] = &cmObj{data: map[string]string{
				"LOG": "warn", "region.r0.LOG": "trace", "ring.ring1.REPLICAS": "5", "cluster-type." + pickName(w.rng, w.cts) + ".REGION": "east"}}
			return true
		}},
		{"ConfigMap", "remove", removeFrom(func(w *world) map[string]*cmObj { return w.configs })},
		{"ConfigMap", "data", func(w *world) bool { return w.withConfig(func(o *cmObj) { o.data = w.configData() }) }},
		{"ConfigMap", "labels", func(w *world) bool { return w.withConfig(func(o *cmObj) { o.labels = w.configLabels() }) }},
		{"ConfigSchema", "add", func(w *world) bool {
			w.schemas[w.serial("s")] = &schemaObj{labels: w.configLabels(), schema: pick(w.rng, schemaTexts)}
			return true
		}},
		{"ConfigSchema", "remove", removeFrom(func(w *world) map[string]*schemaObj { return w.schemas })},
		{"ConfigSchema", "change", func(w *world) bool {
			o := w.schemas[pickName(w.rng, w.schemas)]
			if o == nil {
				return false
			}
			if w.rng.IntN(2) == 0 {
				o.schema = pick(w.rng, schemaTexts)
			} else {
				o.labels = w.configLabels()
				delete(o.labels, "platform-config")
			}
			return true
		}},
		{"SchedulingPolicy", "add", func(w *world) bool {
			w.policies[w.serial("p")] = &policyObj{targets: pick(w.rng, targetSels), clusterType: pick(w.rng, clusterSels)}
			return true
		}},
		{"SchedulingPolicy", "remove", removeFrom(func(w *world) map[string]*policyObj { return w.policies })},
		{"SchedulingPolicy", "change", func(w *world) bool { return w.changePolicy() }},
		{"Workload", "add target", func(w *world) bool {
			return w.withWorkload(func(o *workloadObj) { o.targets = append(o.targets, w.newTarget()) })
		}},
		{"Workload", "remove target", func(w *world) bool {
			return w.withWorkload(func(o *workloadObj) {
				if len(o.targets) > 0 {
					i := w.rng.IntN(len(o.targets))
					o.targets = append(o.targets[:i], o.targets[i+1:]...)
				}
			})
		}},
		{"Workload", "change target", func(w *world) bool { return w.changeTarget() }},
		{"Workload", "labels", func(w *world) bool {
			return w.withWorkload(func(o *workloadObj) { o.labels = map[string]string{"tier": pick(w.rng, []string{"t0", "t1", "t2"})} })
		}},
		{"Workload", "schemas", func(w *world) bool {
			return w.withWorkload(func(o *workloadObj) { o.schemas = pick(w.rng, [][]string{nil, targetSchemas[:1], targetSchemas[1:]}) })
		}},
		{"WorkloadRegistration", "add", func(w *world) bool { w.addWorkload(); return true }},
		{"WorkloadRegistration", "remove", removeFrom(func(w *world) map[string]*workloadObj { return w.workloads })},
		{"WorkloadRegistration", "change", func(w *world) bool {
			return w.withWorkload(func(o *workloadObj) {
				if w.rng.IntN(4) == 0 {
					o.branch = pick(w.rng, []string{"main", "missing"})
				} else {
					o.workspace = pick(w.rng, workspaces)
				}
			})
		}},
		{"DeploymentTarget", "add", func(w *world) bool {
			w.authored[w.serial("solo")] = &authoredObj{labels: map[string]string{"workload": "solo", "workspace": "team-b", "tier": "t1", "ring": "ring1"}, path: "./solo"}
			return true
		}},
		{"DeploymentTarget", "remove", removeFrom(func(w *world) map[string]*authoredObj { return w.authored })},
		{"DeploymentTarget", "change", func(w *world) bool {
			o := w.authored[pickName(w.rng, w.authored)]
			if o == nil {
				return false
			}
			o.labels["ring"], o.path = pick(w.rng, []string{"ring0", "ring1", "ring2"}), "./"+w.serial("solo")
			return true
		}},
		{"BaseRepo", "pin", func(w *world) bool { w.commit++; return true }},
		{"GitOpsRepo", "path", func(w *world) bool {
			w.gitops = pick(w.rng, []string{".", "clusters", "a/b", "../outside", "-"})
			return true
		}},
		{"File", "break", func(w *world) bool { return w.breakFile() }},
		{"File", "fix", func(w *world) bool {
			path := pickName(w.rng, w.broken)
			delete(w.broken, path)
			return path != ""
		}},
		{"File", "shift", func(w *world) bool { return w.shiftFile() }},
		{"None", "none", func(*world) bool { return true }},
	}
}

func removeFrom[V any](of func(w *world) map[string]V) func(w *world) bool {
	return func(w *world) bool {
		m := of(w)
		name := pickName(w.rng, m)
		delete(m, name)
		return name != ""
	}
}

func (w *world) withCT(f func(*ctObj)) bool {
	o := w.cts[pickName(w.rng, w.cts)]
	if o != nil {
		f(o)
	}
	return o != nil
}

func (w *world) withConfig(f func(*cmObj)) bool {
	name := pickName(w.rng, w.configs)
	if name == "" || strings.HasPrefix(name, "azure-app-config") {
		return false
	}
	f(w.configs[name])
	return true
}

func (w *world) withWorkload(f func(*workloadObj)) bool {
	o := w.workloads[pickName(w.rng, w.workloads)]
	if o != nil {
		f(o)
	}
	return o != nil
}

func (w *world) changePolicy() bool {
	o := w.policies[pickName(w.rng, w.policies)]
	if o == nil {
		return false
	}
	switch w.rng.IntN(4) {
	case 0:
		o.targets = pick(w.rng, targetSels)
	case 1:
		o.clusterType = pick(w.rng, clusterSels)
	case 2:
		o.workspace = pick(w.rng, append([]string{""}, workspaces...))
	default:
		o.targets = pick(w.rng, []string{"{matchExpressions: [{key: ring, operator: Bogus, values: [x]}]}", targetSels[0]})
	}
	return true
}

func (w *world) changeTarget() bool {
	return w.withWorkload(func(o *workloadObj) {
		if len(o.targets) == 0 {
			return
		}
		t := o.targets[w.rng.IntN(len(o.targets))]
		switch w.rng.IntN(5) {
		case 0:
			t.labels["ring"] = pick(w.rng, []string{"ring0", "ring1", "ring2"})
		case 1:
			t.path = "./" + w.serial("p")
		case 2:
			t.environment = pick(w.rng, []string{"dev", "dev", "prod"})
		case 3:
			t.schemas = pick(w.rng, [][]string{nil, targetSchemas[:1], targetSchemas})
		default:
			t.name = pick(w.rng, []string{w.serial("t"), "Bad_Name"})
		}
	})
}

// breakFile breaks a random file of a kind whose breakage matters to rendering.
func (w *world) breakFile() bool {
	var paths []string
	for _, name := range sortedKeys(w.cts) {
		paths = append(paths, "cluster-types/"+name+".yaml")
	}
	for _, name := range sortedKeys(w.templates) {
		paths = append(paths, "templates/"+name+".yaml")
	}
	for _, name := range sortedKeys(w.configs) {
		paths = append(paths, "configs/"+name+".yaml")
	}
	for _, name := range sortedKeys(w.schemas) {
		paths = append(paths, "schemas/"+name+".yaml")
	}
	for _, name := range sortedKeys(w.policies) {
		paths = append(paths, "policies/"+name+".yaml")
	}
	w.broken[pick(w.rng, paths)] = pick(w.rng, []string{"syntax", "field", "field"})
	return true
}

// shiftFile moves the document of a random file down, changing every position in it.
func (w *world) shiftFile() bool {
	paths := []string{"base-repo.yaml", "gitops-repo.yaml"}
	for _, name := range sortedKeys(w.cts) {
		paths = append(paths, "cluster-types/"+name+".yaml")
	}
	for _, name := range sortedKeys(w.schemas) {
		paths = append(paths, "schemas/"+name+".yaml")
	}
	for _, name := range sortedKeys(w.templates) {
		paths = append(paths, "templates/"+name+".yaml")
	}
	p := pick(w.rng, paths)
	w.shift[p] = (w.shift[p] + 1) % 3
	return true
}
