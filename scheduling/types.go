package scheduling

// APIGroupVersion is the API version of every Kalypso kind.
const APIGroupVersion = "scheduler.kalypso.io/v1alpha1"

// Kinds of the control-plane model.
const (
	KindEnvironment          = "Environment"
	KindBaseRepo             = "BaseRepo"
	KindGitOpsRepo           = "GitOpsRepo"
	KindWorkloadRegistration = "WorkloadRegistration"
	KindWorkload             = "Workload"
	KindDeploymentTarget     = "DeploymentTarget"
	KindClusterType          = "ClusterType"
	KindTemplate             = "Template"
	KindSchedulingPolicy     = "SchedulingPolicy"
	KindConfigSchema         = "ConfigSchema"
	KindConfigMap            = "ConfigMap"
)

// Object is what every loaded object has: kind, name, labels and where it was written.
type Object struct {
	Kind   string
	Name   string
	Labels map[string]string
	Pos    Pos // the line where the document starts
	// Unknown is set for an object that could not be parsed: its labels are not known.
	Unknown bool
	lines   map[string]int // line of each field path seen, e.g. "spec.reconciler"
}

// Ref names the object for messages, e.g. `ClusterType "large"`.
func (o *Object) Ref() string { return ObjectRef(o.Kind, o.Name) }

// At returns the position of a field (e.g. "spec.reconciler"), or of the document when unknown.
func (o *Object) At(field string) Pos {
	if l, ok := o.lines[field]; ok {
		return Pos{File: o.Pos.File, Line: l}
	}
	return o.Pos
}

// Text is a string value that remembers its line.
type Text struct {
	Value string
	Line  int
}

// ManifestsSpec points at a folder of a branch of a git repository.
type ManifestsSpec struct {
	Repo   string `yaml:"repo" required:"true"`
	Branch string `yaml:"branch" required:"true"`
	Path   string `yaml:"path" required:"true"`
}

// Environment declares an environment and the control-plane branch that describes it.
type Environment struct {
	Object
	Spec EnvironmentSpec
}

// EnvironmentSpec is the spec of an Environment.
type EnvironmentSpec struct {
	ControlPlane ManifestsSpec `yaml:"controlPlane" required:"true"`
	Promotion    *Promotion    `yaml:"promotion"`
	Guard        *Guard        `yaml:"guard"`
}

// Promotion declares how main is promoted into an environment.
type Promotion struct {
	After      string      `yaml:"after"`                            // the upstream environment; none: the first
	Approval   string      `yaml:"approval" enum:"automatic,manual"` // how the promotion from upstream starts
	SoakTime   string      `yaml:"soakTime"`                         // wait after upstream success (automatic)
	Timeout    string      `yaml:"timeout"`                          // longest wait for compliance
	Compliance *Compliance `yaml:"compliance"`                       // what counts as a compliant cluster
}

// Compliance says which commit statuses count as cluster compliance and, for clusters that
// report to the hub, which fraction of the registered clusters must be compliant.
type Compliance struct {
	Contexts     []string          `yaml:"contexts"`     // glob patterns of status contexts, one per cluster
	MinClusters  int               `yaml:"minClusters"`  // clusters that must report at least
	MinPercent   *int              `yaml:"minPercent"`   // registered clusters compliant, in percent (default 100)
	MaxFailed    *int              `yaml:"maxFailed"`    // failed clusters tolerated (default 0)
	ClusterTypes []ClusterTypeGate `yaml:"clusterTypes"` // the same, for the clusters of one cluster type
}

// ClusterTypeGate is the fractional gate of the clusters of one cluster type.
type ClusterTypeGate struct {
	Name       string `yaml:"name" required:"true"`
	MinPercent *int   `yaml:"minPercent"`
	MaxFailed  *int   `yaml:"maxFailed"`
}

// BaseRepo brings main's content, pinned to a commit, into an environment.
type BaseRepo struct {
	Object
	Spec BaseRepoSpec
}

// BaseRepoSpec is the spec of a BaseRepo.
type BaseRepoSpec struct {
	ManifestsSpec `yaml:",inline"`
	Commit        string `yaml:"commit"`
}

// GitOpsRepo says where an environment's manifests are proposed.
type GitOpsRepo struct {
	Object
	Spec ManifestsSpec
}

// WorkloadRegistration registers an application team's workload definition.
type WorkloadRegistration struct {
	Object
	Spec WorkloadRegistrationSpec
}

// WorkloadRegistrationSpec is the spec of a WorkloadRegistration.
type WorkloadRegistrationSpec struct {
	Workload  ManifestsSpec `yaml:"workload" required:"true"`
	Workspace string        `yaml:"workspace"`
}

// Workload is an application team's list of deployment targets.
type Workload struct {
	Object
	Spec         WorkloadSpec
	Registration *WorkloadRegistration // the registration that delivered it
}

// WorkloadSpec is the spec of a Workload.
type WorkloadSpec struct {
	DeploymentTargets []TargetSpec `yaml:"deploymentTargets"`
	ConfigSchemas     []string     `yaml:"configSchemas"`
}

// TargetSpec is one deployment target of a Workload.
type TargetSpec struct {
	Name          string            `yaml:"name" required:"true"`
	Labels        map[string]string `yaml:"labels"`
	Environment   string            `yaml:"environment" required:"true"`
	Manifests     map[string]string `yaml:"manifests" required:"true"`
	ConfigSchemas []string          `yaml:"configSchemas"`
}

// DeploymentTargetSpec is the spec of a DeploymentTarget written directly.
type DeploymentTargetSpec struct {
	Environment   string            `yaml:"environment" required:"true"`
	Manifests     map[string]string `yaml:"manifests" required:"true"`
	ConfigSchemas []string          `yaml:"configSchemas"`
}

// DeploymentTarget is a place a workload wants to run in one environment.
type DeploymentTarget struct {
	Object
	Workload      string
	Workspace     string
	Environment   string
	Manifests     map[string]string
	ConfigSchemas []string
}

// ClusterType is a kind of cluster and the templates its manifests are made with.
type ClusterType struct {
	Object
	Spec ClusterTypeSpec
}

// ClusterTypeSpec is the spec of a ClusterType.
type ClusterTypeSpec struct {
	Reconciler       string `yaml:"reconciler" required:"true"`
	NamespaceService string `yaml:"namespaceService" required:"true"`
	ConfigType       string `yaml:"configType" required:"true"`
}

// Template is a list of Go text/templates rendered for every assignment.
type Template struct {
	Object
	Spec TemplateSpec
}

// TemplateSpec is the spec of a Template.
type TemplateSpec struct {
	Type        string `yaml:"type" required:"true" enum:"reconciler,namespace,config"`
	ContentType string `yaml:"contentType"`
	Manifests   []Text `yaml:"manifests" required:"true"`
}

// SchedulingPolicy assigns selected deployment targets to selected cluster types.
type SchedulingPolicy struct {
	Object
	Spec      SchedulingPolicySpec
	selectors *policySelectors
}

// SchedulingPolicySpec is the spec of a SchedulingPolicy.
type SchedulingPolicySpec struct {
	DeploymentTargetSelector DeploymentTargetSelector `yaml:"deploymentTargetSelector" required:"true"`
	ClusterTypeSelector      ClusterTypeSelector      `yaml:"clusterTypeSelector" required:"true"`
}

// DeploymentTargetSelector selects deployment targets by workspace and labels.
type DeploymentTargetSelector struct {
	Workspace     string        `yaml:"workspace"`
	LabelSelector LabelSelector `yaml:"labelSelector" required:"true"`
}

// ClusterTypeSelector selects cluster types by labels.
type ClusterTypeSelector struct {
	LabelSelector LabelSelector `yaml:"labelSelector" required:"true"`
}

// LabelSelector is a Kubernetes label selector.
type LabelSelector struct {
	MatchLabels      map[string]string          `yaml:"matchLabels"`
	MatchExpressions []LabelSelectorRequirement `yaml:"matchExpressions"`
}

// LabelSelectorRequirement is one expression of a label selector.
type LabelSelectorRequirement struct {
	Key      string   `yaml:"key" required:"true"`
	Operator string   `yaml:"operator" required:"true"`
	Values   []string `yaml:"values"`
}

// ConfigSchema is a JSON schema that platform config must satisfy.
type ConfigSchema struct {
	Object
	Spec ConfigSchemaSpec
}

// ConfigSchemaSpec is the spec of a ConfigSchema.
type ConfigSchemaSpec struct {
	Schema Text `yaml:"schema" required:"true"`
}

// ConfigMap is a Kubernetes ConfigMap; labelled `platform-config: "true"` (or named
// `azure-app-config*`) it carries platform config.
type ConfigMap struct {
	Object
	Data map[string]string
}
