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
	KindFreeze               = "Freeze"
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
	// Repo is the repository's URL, https://HOST/OWNER/REPO; the host is the app's GitHub.
	Repo string `yaml:"repo" required:"true" example:"https://github.com/my-org/platform-control-plane"`
	// Branch is the branch read.
	Branch string `yaml:"branch" required:"true" example:"dev"`
	// Path is the folder of the branch read, relative to the repository's root ("." for all of it).
	Path string `yaml:"path" required:"true" example:"."`
}

// Environment declares an environment and the control-plane branch that describes it. It is
// read from `.environments/` on the control plane's main branch; its name becomes part of
// folder and namespace names, so it is a DNS-1123 label.
type Environment struct {
	Object `example:"{name: stage}"`
	Spec   EnvironmentSpec
	// freezes are the Freezes declared on main that select the environment.
	freezes []*Freeze
}

// EnvironmentSpec is the spec of an Environment.
type EnvironmentSpec struct {
	// ControlPlane is the control plane's branch that describes the environment (its cluster
	// types, configs, policies, GitOps repository and pin).
	ControlPlane ManifestsSpec `yaml:"controlPlane" required:"true" example:"{repo: https://github.com/my-org/platform-control-plane, branch: stage, path: .}"`
	// Promotion declares how main's commits reach the environment. Without it, the
	// environment's pin is edited by hand, as in the reference.
	Promotion *Promotion `yaml:"promotion"`
	// Guard limits what one change may do to the environment before someone accepts it (the
	// blast-radius guard of previews and of pushes).
	Guard *Guard `yaml:"guard"`
}

// Promotion declares how main is promoted into an environment.
type Promotion struct {
	// After names the upstream environment, whose successful deployment of a main commit
	// starts this one's. Without it, the environment is first: every valid main commit is
	// pinned into it.
	After string `yaml:"after" default:"none: the environment is first" example:"dev"`
	// Approval says how the promotion from upstream starts: automatically after SoakTime, or
	// manually, with a Promote button on a check run of the main commit that a user with
	// write permission on the control plane clicks.
	Approval string `yaml:"approval" enum:"automatic,manual" default:"automatic" example:"manual"`
	// SoakTime is how long upstream must have been deployed before an automatic promotion, a
	// Go duration (30s, 10m, 1h).
	SoakTime string `yaml:"soakTime" default:"0s" example:"10m"`
	// Timeout is the longest wait for the clusters to be compliant once the GitOps pull request
	// is merged; after it, the promotion fails. A Go duration of at least 1s.
	Timeout string `yaml:"timeout" default:"30m" example:"45m"`
	// Compliance says which commit statuses on the GitOps repository count as clusters, and how
	// many must report; for clusters that report to the hub, which share of them must be
	// compliant and how many may fail.
	Compliance *Compliance `yaml:"compliance"`
	// Windows are allow and deny windows of the promotions into the environment, automatic and
	// approved alike; Freezes declared on main add deny windows.
	Windows []PromotionWindow `yaml:"windows"`
	// Approvers, with approval manual, are who may approve: GitHub users (a login) and teams
	// (`org/team-slug`, their members read from GitHub). Each needs write permission on the
	// control plane too. Without it, every user with write permission may approve.
	Approvers []string `yaml:"approvers" default:"[]: every user with write permission" example:"[alice, my-org/release-managers]"`
	// Required, with approval manual, is how many distinct approvers must click Promote before
	// the commit is pinned. The author and committer of the main commit never count (four eyes).
	Required int `yaml:"required" default:"1" example:"2"`
}

// Compliance says which commit statuses count as cluster compliance and, for clusters that
// report to the hub, which fraction of the registered clusters must be compliant.
type Compliance struct {
	// Contexts are patterns of commit-status contexts, one status per cluster; `*` matches any
	// text, slashes included, `?` one character. The default matches what Flux's
	// notification-controller posts.
	Contexts []string `yaml:"contexts" default:"[kustomization/*]" example:"[kustomization/*, continuous-delivery/*]"`
	// MinClusters is the least number of clusters that must report success; the clusters that
	// reported on the previous deployment are expected as well.
	MinClusters int `yaml:"minClusters" default:"0" example:"3"`
	// MinPercent is the share of the clusters registered in the hub (clusters that report
	// directly to the app) that must be compliant with the merged GitOps commit or a later
	// one, in percent from 0 to 100, rounded up to whole clusters. It applies when the
	// environment has registered clusters; commit statuses are read otherwise.
	MinPercent *int `yaml:"minPercent" default:"100" example:"95"`
	// MaxFailed is how many registered clusters may report a failure on the merged GitOps
	// commit or a later one before the promotion fails.
	MaxFailed *int `yaml:"maxFailed" default:"0" example:"2"`
	// ClusterTypes are gates of the clusters of single cluster types, which must hold as well
	// as the environment's.
	ClusterTypes []ClusterTypeGate `yaml:"clusterTypes"`
}

// ClusterTypeGate is the fractional gate of the registered clusters of one cluster type.
type ClusterTypeGate struct {
	// Name is the cluster type, as its ClusterType object names it.
	Name string `yaml:"name" required:"true" example:"large"`
	// MinPercent is the share of the cluster type's registered clusters that must be
	// compliant, in percent from 0 to 100.
	MinPercent *int `yaml:"minPercent" default:"100" example:"90"`
	// MaxFailed is how many of the cluster type's registered clusters may fail.
	MaxFailed *int `yaml:"maxFailed" default:"0" example:"1"`
}

// BaseRepo brings main's content, pinned to a commit, into an environment. It is read from
// the environment's branch; the one named main is the pin that promotion writes.
type BaseRepo struct {
	Object `example:"{name: main}"`
	Spec   BaseRepoSpec
}

// BaseRepoSpec is the spec of a BaseRepo: the control plane's main branch and the commit of it
// the environment uses.
type BaseRepoSpec struct {
	ManifestsSpec `yaml:",inline"`
	// Commit is the commit of main the environment is rendered with, recorded in the GitOps
	// tree as .github/tracking/Promoted_Commit_Id; promotion writes it. Empty: main's head.
	Commit string `yaml:"commit" default:"main's head" example:"4a0821c4376423b6a9e6b010bac8fe96616bd6e7"`
}

// GitOpsRepo says where an environment's manifests are proposed: the app keeps one pull
// request from branch kalypso/<environment> into the branch, writing below the path. It is
// read from the environment's branch.
type GitOpsRepo struct {
	Object `example:"{name: gitops}"`
	Spec   ManifestsSpec
}

// WorkloadRegistration registers an application team's workload definition: the repository,
// branch and folder holding its Workload objects. It is read from main.
type WorkloadRegistration struct {
	Object `example:"{name: payments}"`
	Spec   WorkloadRegistrationSpec
}

// WorkloadRegistrationSpec is the spec of a WorkloadRegistration.
type WorkloadRegistrationSpec struct {
	// Workload is the folder of the workload repository's branch that holds the team's
	// Workload objects (only Workloads are read there).
	Workload ManifestsSpec `yaml:"workload" required:"true" example:"{repo: https://github.com/my-org/payments, branch: main, path: deploy}"`
	// Workspace is the team's workspace: the label workspace of its deployment targets, which
	// a SchedulingPolicy can select on.
	Workspace string `yaml:"workspace" default:"\"\"" example:"payments-team"`
}

// Workload is an application team's list of deployment targets. It is read from the folder a
// WorkloadRegistration names in the team's repository; its name becomes part of folder and
// namespace names, so it is a DNS-1123 label.
type Workload struct {
	Object       `example:"{name: payments-api, labels: {tier: backend}}"`
	Spec         WorkloadSpec
	Registration *WorkloadRegistration // the registration that delivered it
}

// WorkloadSpec is the spec of a Workload.
type WorkloadSpec struct {
	// DeploymentTargets are the places the workload wants to run, one per environment and
	// variant; each becomes the deployment target <workload>-<name>.
	DeploymentTargets []TargetSpec `yaml:"deploymentTargets"`
	// ConfigSchemas names ConfigSchemas that the platform config of every target must satisfy.
	ConfigSchemas []string `yaml:"configSchemas" default:"[]" example:"[payments-config]"`
}

// TargetSpec is one deployment target of a Workload.
type TargetSpec struct {
	// Name is the target's name within the workload, a DNS-1123 label.
	Name string `yaml:"name" required:"true" example:"functional-test"`
	// Labels are the target's labels, for scheduling policies and config matching; the
	// workload's labels, workload and workspace are added to them.
	Labels map[string]string `yaml:"labels" default:"{}" example:"{purpose: functional-test, size: small}"`
	// Environment is the environment the target is for.
	Environment string `yaml:"environment" required:"true" example:"dev"`
	// Manifests says where the workload's manifests for the target are, as the templates use
	// them (.Manifests.repo, .Manifests.branch, .Manifests.path); repo must be on a host the
	// app's sources.manifestHosts setting allows.
	Manifests map[string]string `yaml:"manifests" required:"true" example:"{repo: https://github.com/my-org/payments-gitops, branch: dev, path: ./functional-test}"`
	// ConfigSchemas names ConfigSchemas that the target's platform config must satisfy, in
	// addition to the workload's.
	ConfigSchemas []string `yaml:"configSchemas" default:"[]" example:"[database-config]"`
}

// DeploymentTargetSpec is the spec of a DeploymentTarget written directly.
type DeploymentTargetSpec struct {
	// Environment is the environment the target is for.
	Environment string `yaml:"environment" required:"true" example:"dev"`
	// Manifests says where the manifests for the target are (.Manifests in templates).
	Manifests map[string]string `yaml:"manifests" required:"true" example:"{repo: https://github.com/my-org/ingress-gitops, branch: dev, path: ./ingress}"`
	// ConfigSchemas names ConfigSchemas that the target's platform config must satisfy.
	ConfigSchemas []string `yaml:"configSchemas" default:"[]" example:"[ingress-config]"`
}

// DeploymentTarget is a place a workload wants to run in one environment. Workloads make
// them; one can also be written directly on the environment's branch, labelled with its
// workload and workspace.
type DeploymentTarget struct {
	Object        `example:"{name: ingress-nginx, labels: {workload: ingress, workspace: platform-team}}"`
	Workload      string
	Workspace     string
	Environment   string
	Manifests     map[string]string
	ConfigSchemas []string
}

// ClusterType is a kind of cluster and the templates its manifests are made with. It is read
// from the environment's branch; its name is the GitOps folder of its clusters, and its labels
// are what scheduling policies and platform configs select.
type ClusterType struct {
	Object `example:"{name: large, labels: {region: west-us, size: large}}"`
	Spec   ClusterTypeSpec
}

// ClusterTypeSpec is the spec of a ClusterType: the Templates that make each assignment's
// three files.
type ClusterTypeSpec struct {
	// Reconciler names the Template that makes reconciler.yaml (a Flux GitRepository and
	// Kustomization, an Argo CD Application, anything).
	Reconciler string `yaml:"reconciler" required:"true" example:"arc-flux"`
	// NamespaceService names the Template that makes namespace.yaml.
	NamespaceService string `yaml:"namespaceService" required:"true" example:"default"`
	// ConfigType names the Template that makes platform-config.yaml (or platform-config.sh).
	ConfigType string `yaml:"configType" required:"true" example:"configmap"`
}

// Template is a list of Go text/templates rendered for every assignment that uses it, with
// sprig's functions and toYaml, stringify, hash and unquote. It is read from main.
type Template struct {
	Object `example:"{name: default}"`
	Spec   TemplateSpec
}

// TemplateSpec is the spec of a Template.
type TemplateSpec struct {
	// Type is the role the template plays.
	Type string `yaml:"type" required:"true" enum:"reconciler,namespace,config" example:"namespace"`
	// ContentType is read for config templates only: sh writes platform-config.sh, anything
	// else platform-config.yaml.
	ContentType string `yaml:"contentType" default:"yaml" example:"yaml"`
	// Manifests are the template texts, each rendered into one document of the file with the
	// assignment's data: .DeploymentTargetName, .Namespace (<environment>-<cluster
	// type>-<deployment target>), .Environment, .Workspace, .Workload, .ClusterType, .Labels (the
	// target's), .Manifests (the target's) and .ConfigData (the merged platform config).
	Manifests []Text `yaml:"manifests" required:"true" example:"[\"apiVersion: v1\\nkind: Namespace\\nmetadata:\\n  name: {{ .Namespace }}\\n  labels:\\n    workload: {{ .Workload }}\\n\"]"`
}

// SchedulingPolicy assigns selected deployment targets to selected cluster types: every
// target it selects runs on every cluster type it selects. It is read from the environment's
// branch.
type SchedulingPolicy struct {
	Object    `example:"{name: payments-on-large}"`
	Spec      SchedulingPolicySpec
	selectors *policySelectors
}

// SchedulingPolicySpec is the spec of a SchedulingPolicy.
type SchedulingPolicySpec struct {
	// DeploymentTargetSelector selects the deployment targets.
	DeploymentTargetSelector DeploymentTargetSelector `yaml:"deploymentTargetSelector" required:"true"`
	// ClusterTypeSelector selects the cluster types.
	ClusterTypeSelector ClusterTypeSelector `yaml:"clusterTypeSelector" required:"true"`
}

// DeploymentTargetSelector selects deployment targets by workspace and labels.
type DeploymentTargetSelector struct {
	// Workspace, when set, keeps only the targets of that workspace.
	Workspace string `yaml:"workspace" default:"any workspace" example:"payments-team"`
	// LabelSelector selects the targets by their labels; {} selects all.
	LabelSelector LabelSelector `yaml:"labelSelector" required:"true"`
}

// ClusterTypeSelector selects cluster types by labels.
type ClusterTypeSelector struct {
	// LabelSelector selects the cluster types by their labels; {} selects all.
	LabelSelector LabelSelector `yaml:"labelSelector" required:"true"`
}

// LabelSelector is a Kubernetes label selector: every matchLabels pair and every expression
// must hold.
type LabelSelector struct {
	// MatchLabels are labels the object must have, with these values.
	MatchLabels map[string]string `yaml:"matchLabels" default:"{}" example:"{size: large}"`
	// MatchExpressions are further conditions on the labels.
	MatchExpressions []LabelSelectorRequirement `yaml:"matchExpressions"`
}

// LabelSelectorRequirement is one expression of a label selector.
type LabelSelectorRequirement struct {
	// Key is the label's key.
	Key string `yaml:"key" required:"true" example:"region"`
	// Operator is In, NotIn, Exists or DoesNotExist.
	Operator string `yaml:"operator" required:"true" example:"In"`
	// Values are the values In and NotIn compare with; empty for Exists and DoesNotExist.
	Values []string `yaml:"values" default:"[]" example:"[west-us, east-us]"`
}

// ConfigSchema is a JSON schema that platform config must satisfy. It applies to the
// assignments its labels match, as a platform config does, and to the deployment targets that
// name it. It is read from main or from the environment's branch.
type ConfigSchema struct {
	Object `example:"{name: payments-config}"`
	Spec   ConfigSchemaSpec
}

// ConfigSchemaSpec is the spec of a ConfigSchema.
type ConfigSchemaSpec struct {
	// Schema is the JSON schema (as JSON text) the assignment's merged config data must
	// satisfy; it cannot load external $refs.
	Schema Text `yaml:"schema" required:"true" example:"'{\"type\": \"object\", \"required\": [\"DATABASE_URL\"]}'"`
}

// ConfigMap is a Kubernetes ConfigMap; labelled `platform-config: "true"` (or named
// `azure-app-config*`) it carries platform config. It applies to an assignment when each of
// its other labels matches the cluster type or the deployment target: cluster-type and
// deployment-target compare with their names, workload with the target's workload, any other
// key with the label of either; a config without other labels applies everywhere. The configs
// that apply are merged in name order, the last one winning on a key. It is read from the
// environment's branch, or from main for every environment.
type ConfigMap struct {
	Object `example:"{name: west-us-config, labels: {platform-config: \"true\", region: west-us}}"`
	// Data is the config (.ConfigData in templates). A value that parses as a YAML list or map
	// is used as that structure; any other value is a string, and '…' in single quotes forces
	// a string.
	Data map[string]string `example:"{REGION: West US, DATABASE_URL: \"mysql://west:8806/payments\"}"`
}

// PromotionWindow is an allow or deny window of an environment's promotions: it is active for
// its duration from each time its cron schedule fires in its time zone (the semantics of
// Argo CD's sync windows). While a deny window is active, or while no allow window is active
// when the environment declares some, no pin is pushed automatically, the Promote button does
// not promote, and the environment's GitOps pull request carries a failing kalypso/window
// commit status. A start at a wall time the clock skips (daylight saving) does not happen that
// day; one at a wall time the clock repeats happens twice.
type PromotionWindow struct {
	// Name names the window in every verdict it decides.
	Name string `yaml:"name" default:"<kind>-<index>, e.g. deny-0" example:"business-hours"`
	// Kind is allow or deny.
	Kind string `yaml:"kind" required:"true" enum:"allow,deny" example:"allow"`
	// Schedule is a cron schedule of five fields (minute hour day-of-month month day-of-week)
	// or @yearly, @monthly, @weekly, @daily, @hourly: when the window starts.
	Schedule string `yaml:"schedule" required:"true" example:"0 9 * * 1-5"`
	// Duration is how long the window lasts from each start, a Go duration (elapsed time).
	Duration string `yaml:"duration" required:"true" example:"8h"`
	// TimeZone is the IANA time zone the schedule is read in.
	TimeZone string `yaml:"timeZone" default:"UTC" example:"Europe/Paris"`
}

// Freeze is an organisation-wide deny window of promotions, declared once in `.environments/`
// on the control plane's main branch (for example in `.environments/freezes.yaml`): it applies
// to every environment with spec.promotion whose labels its selector matches, as a deny window
// of their own would.
type Freeze struct {
	Object `example:"{name: year-end}"`
	Spec   FreezeSpec
}

// FreezeSpec is the spec of a Freeze.
type FreezeSpec struct {
	// Schedule is a cron schedule of five fields, or a descriptor such as @yearly: when the
	// freeze starts.
	Schedule string `yaml:"schedule" required:"true" example:"0 0 20 12 *"`
	// Duration is how long the freeze lasts from each start, a Go duration (elapsed time).
	Duration string `yaml:"duration" required:"true" example:"336h"`
	// TimeZone is the IANA time zone the schedule is read in.
	TimeZone string `yaml:"timeZone" default:"UTC" example:"Europe/Paris"`
	// Environments selects the environments frozen by their labels; without it, every
	// environment is.
	Environments *LabelSelector `yaml:"environments" default:"every environment" example:"{matchLabels: {tier: production}}"`
}
