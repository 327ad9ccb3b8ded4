package scheduling

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// metadata is the part of Kubernetes object metadata that a control plane may carry.
type metadata struct {
	// Name is the object's name, unique per kind in an environment. Environments, cluster
	// types, workloads and deployment targets become folder and namespace names, so theirs are
	// DNS-1123 labels.
	Name string `yaml:"name" required:"true" example:"large"`
	// Namespace is accepted for compatibility and ignored: the environment is the namespace.
	Namespace string `yaml:"namespace" default:"the environment" example:"dev"`
	// Labels are what scheduling policies and platform configs select, as Kubernetes labels
	// (valid keys and values).
	Labels map[string]string `yaml:"labels" default:"{}" example:"{size: large}"`
	// Annotations are accepted and ignored.
	Annotations map[string]string `yaml:"annotations" default:"{}" example:"{owner: platform-team}"`
}

// objects is everything read from a set of files, valid and broken.
type objects struct {
	environments  []*Environment
	baseRepos     []*BaseRepo
	gitopsRepos   []*GitOpsRepo
	registrations []*WorkloadRegistration
	workloads     []*Workload
	targets       []*DeploymentTarget
	clusterTypes  []*ClusterType
	templates     []*Template
	policies      []*SchedulingPolicy
	schemas       []*ConfigSchema
	configMaps    []*ConfigMap
	freezes       []*Freeze
	broken        []*Object // objects that failed validation; kind and name as far as known
	// unusableTemplates are broken Templates whose spec could be read (only their metadata is
	// wrong): never used, their manifests are parsed only to report their own errors.
	unusableTemplates []*Template
	foreign           []*Object // documents of kinds the engine does not read (Deployment, Assignment…)
	unreadable        bool      // some file could not be parsed, so objects may be missing
}

// internalKinds are Kalypso kinds that the reference operator generates; they are ignored.
var internalKinds = map[string]bool{"Assignment": true, "AssignmentPackage": true}

var (
	kindLine = regexp.MustCompile(`^kind:\s*["']?([A-Za-z]+)["']?\s*$`)
	nameLine = regexp.MustCompile(`^\s+name:\s*["']?([a-z0-9.\-]+)["']?\s*$`)
)

// recoverIdentity finds the kind and metadata.name of a document that does not parse.
// Its labels are unknown, so anything that matches by labels must assume it applies.
func recoverIdentity(lines []string, pos Pos) *Object {
	obj := &Object{Pos: pos, Unknown: true, lines: map[string]int{}}
	inMeta := false
	for _, l := range lines {
		l = strings.TrimRight(l, "\r\n")
		if m := kindLine.FindStringSubmatch(l); m != nil && isOurKind(m[1]) {
			obj.Kind = m[1]
		}
		switch {
		case strings.HasPrefix(l, "metadata:"):
			inMeta = true
		case inMeta && obj.Name == "" && nameLine.MatchString(l):
			obj.Name = nameLine.FindStringSubmatch(l)[1]
		case len(l) > 0 && l[0] != ' ' && l[0] != '#':
			inMeta = false
		}
	}
	return obj
}

// merge adds everything found in one file.
func (o *objects) merge(f *objects) {
	o.environments = append(o.environments, f.environments...)
	o.baseRepos = append(o.baseRepos, f.baseRepos...)
	o.gitopsRepos = append(o.gitopsRepos, f.gitopsRepos...)
	o.registrations = append(o.registrations, f.registrations...)
	o.workloads = append(o.workloads, f.workloads...)
	o.targets = append(o.targets, f.targets...)
	o.clusterTypes = append(o.clusterTypes, f.clusterTypes...)
	o.templates = append(o.templates, f.templates...)
	o.policies = append(o.policies, f.policies...)
	o.schemas = append(o.schemas, f.schemas...)
	o.configMaps = append(o.configMaps, f.configMaps...)
	o.freezes = append(o.freezes, f.freezes...)
	o.broken = append(o.broken, f.broken...)
	o.unusableTemplates = append(o.unusableTemplates, f.unusableTemplates...)
	o.foreign = append(o.foreign, f.foreign...)
	o.unreadable = o.unreadable || f.unreadable
}

// scalarField returns the value of a top-level scalar key of a mapping.
func scalarField(n *yaml.Node, key string) (string, bool) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode && !isNull(n.Content[i+1]) {
			return n.Content[i+1].Value, true
		}
	}
	return "", false
}

func parseDocument(file string, n *yaml.Node, objs *objects, errs *Errors) {
	pos := Pos{File: file, Line: n.Line}
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		return // not a Kubernetes object: ignored like any other non-object file content
	}
	apiVersion, hasAPI := scalarField(n, "apiVersion")
	kind, hasKind := scalarField(n, "kind")
	group, _, _ := strings.Cut(apiVersion, "/")
	switch {
	case !hasKind && group == "scheduler.kalypso.io":
		errs.Add(pos, "", "missing field \"kind\"")
		objs.unreadable = true
	case !hasKind:
		return
	case !hasAPI && !isOurKind(kind):
		objs.foreignDocument(kind, n, pos)
	case !hasAPI:
		errs.Add(pos, ObjectRef(kind, ""), "missing field \"apiVersion\" (want %s)", APIGroupVersion)
		objs.brokenDocument(kind, n, pos)
	case apiVersion == "v1" && kind == KindConfigMap:
		decodeObject(file, n, kind, objs, errs)
	case group != "scheduler.kalypso.io", internalKinds[kind]:
		objs.foreignDocument(kind, n, pos)
	case !isOurKind(kind) || kind == KindConfigMap:
		errs.Add(pos, "", "unknown kind %q in %s", kind, apiVersion)
		objs.unreadable = true
	case apiVersion != APIGroupVersion:
		errs.Add(pos, ObjectRef(kind, ""), "unsupported apiVersion %q (want %s)", apiVersion, APIGroupVersion)
		objs.brokenDocument(kind, n, pos)
	default:
		decodeObject(file, n, kind, objs, errs)
	}
}

// brokenDocument records a document of a known kind that cannot be decoded at all.
func (o *objects) brokenDocument(kind string, n *yaml.Node, pos Pos) {
	name, _ := scalarField(metadataNode(n), "name")
	o.broken = append(o.broken, &Object{Kind: kind, Name: name, Pos: pos, Unknown: true, lines: map[string]int{}})
}

// foreignDocument records a document of a kind the engine does not read.
func (o *objects) foreignDocument(kind string, n *yaml.Node, pos Pos) {
	name, _ := scalarField(metadataNode(n), "name")
	o.foreign = append(o.foreign, &Object{Kind: kind, Name: name, Pos: pos, Unknown: true, lines: map[string]int{}})
}

func isOurKind(kind string) bool {
	_, ok := specTypes[kind]
	return ok || kind == KindConfigMap
}

// specTypes gives, for every Kalypso kind, a new value of its spec type.
var specTypes = map[string]func() any{
	KindEnvironment:          func() any { return &EnvironmentSpec{} },
	KindBaseRepo:             func() any { return &BaseRepoSpec{} },
	KindGitOpsRepo:           func() any { return &ManifestsSpec{} },
	KindWorkloadRegistration: func() any { return &WorkloadRegistrationSpec{} },
	KindWorkload:             func() any { return &WorkloadSpec{} },
	KindDeploymentTarget:     func() any { return &DeploymentTargetSpec{} },
	KindClusterType:          func() any { return &ClusterTypeSpec{} },
	KindTemplate:             func() any { return &TemplateSpec{} },
	KindSchedulingPolicy:     func() any { return &SchedulingPolicySpec{} },
	KindConfigSchema:         func() any { return &ConfigSchemaSpec{} },
	KindFreeze:               func() any { return &FreezeSpec{} },
}

// decodeObject decodes one document of a known kind strictly and files it under its kind.
func decodeObject(file string, n *yaml.Node, kind string, objs *objects, errs *Errors) {
	pos := Pos{File: file, Line: n.Line}
	name, _ := scalarField(metadataNode(n), "name")
	d := newFieldDecoder(pos, ObjectRef(kind, name), errs)
	d.maxVisits = aliasExpansion*countNodes(n) + 100
	var meta metadata
	var spec any
	data := map[string]string{}
	if kind == KindConfigMap {
		spec = &data
	} else {
		spec = specTypes[kind]()
	}
	d.decodeEnvelope(n, kind, &meta, spec)
	decoded := d.ok
	obj := Object{Kind: kind, Name: meta.Name, Labels: meta.Labels, Pos: pos, lines: d.lines}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	validateMeta(d, &obj)
	if !d.ok {
		objs.broken = append(objs.broken, &obj)
		if t, ok := spec.(*TemplateSpec); ok && decoded { // its manifests still report their own errors
			objs.unusableTemplates = append(objs.unusableTemplates, &Template{Object: obj, Spec: *t})
		}
		return
	}
	fileObject(objs, obj, spec)
}

func metadataNode(n *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "metadata" && n.Content[i+1].Kind == yaml.MappingNode {
			return n.Content[i+1]
		}
	}
	return &yaml.Node{}
}

// decodeEnvelope decodes the top level of an object: apiVersion, kind, metadata, spec (or data).
func (d *fieldDecoder) decodeEnvelope(n *yaml.Node, kind string, meta *metadata, spec any) {
	allowed := map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "status": true}
	body := "spec"
	if kind == KindConfigMap {
		body = "data"
		allowed["binaryData"], allowed["immutable"] = true, true
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.fail(k.Line, "field %q is defined twice", k.Value)
			continue
		}
		seen[k.Value] = !isNull(v)
		d.lines[k.Value] = k.Line
		switch k.Value {
		case "metadata":
			d.decode(v, reflect.ValueOf(meta).Elem(), "metadata")
		case body:
			d.decode(v, reflect.ValueOf(spec).Elem(), body)
		default:
			if !allowed[k.Value] {
				d.fail(k.Line, "unknown field %q", k.Value)
			}
		}
	}
	if !seen["metadata"] {
		d.fail(n.Line, "missing required field \"metadata\"")
	} else if meta.Name == "" && d.ok {
		d.fail(d.lineOf("metadata", n.Line), "metadata.name must not be empty")
	}
	if !seen[body] && kind != KindConfigMap {
		d.fail(n.Line, "missing required field %q", body)
	}
}

func (d *fieldDecoder) lineOf(path string, fallback int) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	return fallback
}

// pathNameKinds become folder names or namespace parts, so their names must be DNS-1123 labels.
var pathNameKinds = map[string]bool{KindClusterType: true, KindWorkload: true, KindEnvironment: true, KindDeploymentTarget: true}

func validateMeta(d *fieldDecoder, obj *Object) {
	if obj.Name != "" {
		var problems []string
		if pathNameKinds[obj.Kind] {
			problems = validation.IsDNS1123Label(obj.Name)
		} else {
			problems = validation.IsDNS1123Subdomain(obj.Name)
		}
		for _, p := range problems {
			d.fail(d.lineOf("metadata.name", obj.Pos.Line), "invalid name %q: %s", obj.Name, p)
		}
	}
	validateLabels(d, obj.Labels, "metadata.labels")
}

func validateLabels(d *fieldDecoder, labels map[string]string, path string) {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		line := d.lineOf(path+"."+k, d.lineOf(path, d.pos.Line))
		for _, p := range validation.IsQualifiedName(k) {
			d.fail(line, "%s: invalid label key %q: %s", path, k, p)
		}
		for _, p := range validation.IsValidLabelValue(labels[k]) {
			d.fail(line, "%s: invalid value for label %q: %s", path, k, p)
		}
	}
}
