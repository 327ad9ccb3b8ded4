// Package deploy checks the Helm chart (deploy/helm/kalypso) and the kustomize base
// (deploy/kustomize): they are linted and rendered with the pinned helm and kustomize that
// `make tools` installs into bin/tools, every rendered object is decoded strictly into its
// Kubernetes API type (an unknown or misspelt field fails), the pieces are checked to fit
// together (selectors, ports, probes, Secret and ConfigMap references, security context), and
// the rendered settings file is loaded with the app's own config package, as the pod would.
package deploy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kalypso-gitops/kalypso/config"
)

const (
	chartDir       = "helm/kalypso"
	fullValues     = "helm/kalypso/ci/full-values.yaml"
	kustomizeBase  = "kustomize"
	kustomizeREADM = "kustomize/README.md"
	namespace      = "kalypso"
	webhookPath    = "/api/github/hook"
)

// tool returns the path of a pinned tool installed by `make tools`. It never skips: a missing
// tool fails the test with the command that installs it.
func tool(t *testing.T, name, envVar string) string {
	t.Helper()
	p := os.Getenv(envVar)
	if p == "" {
		p = filepath.Join("..", "bin", "tools", name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not found at %s: run `make tools`, which installs the pinned version into bin/tools (`make test` does it first)", name, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func helm(t *testing.T) string      { return tool(t, "helm", "KALYPSO_TEST_HELM") }
func kustomize(t *testing.T) string { return tool(t, "kustomize", "KALYPSO_TEST_KUSTOMIZE") }

// run runs a tool in a scratch HOME (helm keeps caches there) and returns its standard output;
// the error carries its standard error.
func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+home+"/cache",
		"HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

func mustRun(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := run(t, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// helmTemplate renders the chart as release "kalypso" in namespace "kalypso".
func helmTemplate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return run(t, helm(t), append([]string{"template", "kalypso", chartDir, "--namespace", namespace}, args...)...)
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor (monitoring.coreos.com/v1)
// the chart writes; a field outside it is an error like any unknown field.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel          string               `json:"jobLabel,omitempty"`
		NamespaceSelector *namespaceSelector   `json:"namespaceSelector,omitempty"`
		Selector          metav1.LabelSelector `json:"selector"`
		Endpoints         []smEndpoint         `json:"endpoints"`
	} `json:"spec"`
}

type namespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

type smEndpoint struct {
	Port              string        `json:"port,omitempty"`
	Path              string        `json:"path,omitempty"`
	Scheme            string        `json:"scheme,omitempty"`
	Interval          string        `json:"interval,omitempty"`
	ScrapeTimeout     string        `json:"scrapeTimeout,omitempty"`
	HonorLabels       bool          `json:"honorLabels,omitempty"`
	Relabelings       []relabelling `json:"relabelings,omitempty"`
	MetricRelabelings []relabelling `json:"metricRelabelings,omitempty"`
}

type relabelling struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	Separator    *string  `json:"separator,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Modulus      uint64   `json:"modulus,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// kinds maps apiVersion/kind to the Go type an object is decoded into; any other kind is an error.
var kinds = map[string]func() any{
	"v1/ConfigMap":                            func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                               func() any { return &corev1.Secret{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/Ingress":            func() any { return &networkingv1.Ingress{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &serviceMonitor{} },
}

// rendered holds the decoded objects of one rendering.
type rendered struct {
	kinds           []string // apiVersion/kind of each object, in order
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	serviceAccounts []*corev1.ServiceAccount
	pdbs            []*policyv1.PodDisruptionBudget
	ingresses       []*networkingv1.Ingress
	serviceMonitors []*serviceMonitor
	networkPolicies []*networkingv1.NetworkPolicy
}

// decode splits a multi-document YAML stream and decodes every document strictly (unknown fields
// and duplicate keys are errors) into its API type. It returns every problem found.
func decode(stream string) (*rendered, []error) {
	r := &rendered{}
	var errs []error
	reader := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r, append(errs, fmt.Errorf("document %d: %v", i, err))
		}
		var probe map[string]any
		if err := sigsyaml.Unmarshal(doc, &probe); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %v", i, err))
			continue
		}
		if probe == nil {
			continue // only comments
		}
		var tm metav1.TypeMeta
		_ = sigsyaml.Unmarshal(doc, &tm)
		key := tm.APIVersion + "/" + tm.Kind
		newObj, ok := kinds[key]
		if !ok {
			errs = append(errs, fmt.Errorf("document %d: unexpected kind %q", i, key))
			continue
		}
		obj := newObj()
		if err := sigsyaml.UnmarshalStrict(doc, obj); err != nil {
			name, _ := probe["metadata"].(map[string]any)["name"].(string)
			errs = append(errs, fmt.Errorf("%s %s: %v", tm.Kind, name, err))
			continue
		}
		r.kinds = append(r.kinds, key)
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			r.configMaps = append(r.configMaps, o)
		case *corev1.Secret:
			r.secrets = append(r.secrets, o)
		case *corev1.Service:
			r.services = append(r.services, o)
		case *corev1.ServiceAccount:
			r.serviceAccounts = append(r.serviceAccounts, o)
		case *appsv1.Deployment:
			r.deployments = append(r.deployments, o)
		case *policyv1.PodDisruptionBudget:
			r.pdbs = append(r.pdbs, o)
		case *networkingv1.Ingress:
			r.ingresses = append(r.ingresses, o)
		case *serviceMonitor:
			r.serviceMonitors = append(r.serviceMonitors, o)
		case *networkingv1.NetworkPolicy:
			r.networkPolicies = append(r.networkPolicies, o)
		}
	}
	return r, errs
}

func mustDecode(t *testing.T, stream string) *rendered {
	t.Helper()
	r, errs := decode(stream)
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	return r
}

// kindCounts summarises the rendered kinds, such as "apps/v1/Deployment=1".
func (r *rendered) kindCounts() []string {
	n := map[string]int{}
	for _, k := range r.kinds {
		n[k]++
	}
	var out []string
	for k, c := range n {
		out = append(out, fmt.Sprintf("%s=%d", k, c))
	}
	slices.Sort(out)
	return out
}

func (r *rendered) configMap(name string) *corev1.ConfigMap {
	for _, c := range r.configMaps {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (r *rendered) secret(name string) *corev1.Secret {
	for _, s := range r.secrets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// deployment returns the only Deployment and its kalypso container.
func (r *rendered) deployment(t *testing.T) (*appsv1.Deployment, *corev1.Container) {
	t.Helper()
	if len(r.deployments) != 1 {
		t.Fatalf("%d Deployments rendered, want 1", len(r.deployments))
	}
	d := r.deployments[0]
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == "kalypso" {
			return d, c
		}
	}
	t.Fatalf("Deployment %s has no container named kalypso", d.Name)
	return nil, nil
}

func envValue(c *corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func containerPort(c *corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// portNamed reports whether a probe or Service target port designates a port of the container.
func portNamed(c *corev1.Container, p intstr.IntOrString) bool {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && p.StrVal == cp.Name) || (p.Type == intstr.Int && p.IntVal == cp.ContainerPort) {
			return true
		}
	}
	return false
}

func selects(t *testing.T, sel *metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Errorf("selector %v: %v", sel, err)
		return false
	}
	return s.Matches(labels.Set(set))
}

// checkWorkload checks that the rendered objects fit together and follow the deployment rules:
// probes, ports, security context, resources, selectors, Service, PDB, Ingress, ServiceMonitor.
func checkWorkload(t *testing.T, r *rendered) {
	t.Helper()
	d, c := r.deployment(t)
	pod := d.Spec.Template
	if !selects(t, d.Spec.Selector, pod.Labels) {
		t.Errorf("Deployment selector %v does not select its pod labels %v", d.Spec.Selector, pod.Labels)
	}

	// Ports and the addresses the app listens on.
	httpPort, mgmtPort := containerPort(c, "http"), containerPort(c, "management")
	if httpPort == 0 || mgmtPort == 0 {
		t.Errorf("container ports %v: want ports named http and management", c.Ports)
	}
	for name, port := range map[string]int32{"KALYPSO_SERVER_ADDRESS": httpPort, "KALYPSO_SERVER_MANAGEMENT_ADDRESS": mgmtPort} {
		if e, ok := envValue(c, name); !ok || e.Value != ":"+strconv.Itoa(int(port)) {
			t.Errorf("%s = %q, want \":%d\" (the container port)", name, e.Value, port)
		}
	}

	// Probes: liveness /healthz, readiness /readyz, on a port of the container.
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		switch {
		case p.probe == nil || p.probe.HTTPGet == nil:
			t.Errorf("%s probe %v: want an HTTP GET of %s", p.name, p.probe, p.path)
		case p.probe.HTTPGet.Path != p.path:
			t.Errorf("%s probe path %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
		case !portNamed(c, p.probe.HTTPGet.Port):
			t.Errorf("%s probe port %v is not a port of the container", p.name, p.probe.HTTPGet.Port.String())
		}
	}
	if p := c.StartupProbe; p != nil && (p.HTTPGet == nil || !portNamed(c, p.HTTPGet.Port)) {
		t.Errorf("startup probe %v does not GET a port of the container", p)
	}

	// Non-root, read-only root file system, no privilege escalation, no capabilities.
	psc, sc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("pod securityContext %v: want runAsNonRoot", psc)
	}
	if psc != nil && psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		t.Error("pod runs as user 0")
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container securityContext %+v: want readOnlyRootFilesystem, no privilege escalation, capabilities dropped", sc)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token; Kalypso never calls the Kubernetes API")
	}

	// Resources: memory requested and limited (the git cache is in memory by default).
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %v: want a memory request and limit", c.Resources)
	}
	if e, _ := envValue(c, "GOMEMLIMIT"); e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil ||
		e.ValueFrom.ResourceFieldRef.Resource != "limits.memory" || e.ValueFrom.ResourceFieldRef.ContainerName != c.Name {
		t.Errorf("GOMEMLIMIT %v: want the container's memory limit", e.ValueFrom)
	}

	// Volumes: every mount has its volume; /tmp is writable.
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	tmp := false
	for _, m := range c.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("volume mount %s at %s has no volume", m.Name, m.MountPath)
		}
		if m.MountPath == "/tmp" && !m.ReadOnly && volumes[m.Name].EmptyDir != nil {
			tmp = true
		}
	}
	if !tmp {
		t.Error("no writable emptyDir at /tmp (the root file system is read-only)")
	}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.Name == "config" && r.configMap(v.ConfigMap.Name) == nil {
			t.Errorf("volume config refers to ConfigMap %s, which is not rendered", v.ConfigMap.Name)
		}
	}

	// Service account.
	if len(r.serviceAccounts) > 0 && !slices.ContainsFunc(r.serviceAccounts, func(sa *corev1.ServiceAccount) bool {
		return sa.Name == pod.Spec.ServiceAccountName
	}) {
		t.Errorf("the pod's service account %q is not rendered", pod.Spec.ServiceAccountName)
	}

	// Service: selects the pods, targets the container ports.
	if len(r.services) != 1 {
		t.Fatalf("%d Services rendered, want 1", len(r.services))
	}
	svc := r.services[0]
	if !selects(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, pod.Labels) {
		t.Errorf("Service selector %v does not select the pod labels %v", svc.Spec.Selector, pod.Labels)
	}
	svcPorts := map[string]corev1.ServicePort{}
	for _, p := range svc.Spec.Ports {
		svcPorts[p.Name] = p
		if !portNamed(c, p.TargetPort) {
			t.Errorf("Service port %s targets %s, not a port of the container", p.Name, p.TargetPort.String())
		}
	}
	for _, name := range []string{"http", "management"} {
		if _, ok := svcPorts[name]; !ok {
			t.Errorf("Service has no port named %s", name)
		}
	}

	for _, pdb := range r.pdbs {
		if !selects(t, pdb.Spec.Selector, pod.Labels) {
			t.Errorf("PodDisruptionBudget selector %v does not select the pod labels %v", pdb.Spec.Selector, pod.Labels)
		}
		if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
			t.Errorf("PodDisruptionBudget: want exactly one of minAvailable and maxUnavailable")
		}
	}

	// Ingress: only the webhook path, to the Service's http port.
	for _, ing := range r.ingresses {
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				t.Errorf("Ingress rule %s has no paths", rule.Host)
				continue
			}
			for _, p := range rule.HTTP.Paths {
				b := p.Backend.Service
				if p.Path != webhookPath || b == nil || b.Name != svc.Name ||
					(b.Port.Name != "http" && b.Port.Number != svcPorts["http"].Port) {
					t.Errorf("Ingress path %s -> %+v: want only %s to the Service's http port", p.Path, b, webhookPath)
				}
			}
		}
	}

	checkPreStop(t, d, c)
	for _, np := range r.networkPolicies {
		checkNetworkPolicy(t, np, pod.Labels, c)
	}

	// ServiceMonitor: scrapes /metrics on the management port of the Service.
	for _, sm := range r.serviceMonitors {
		if !selects(t, &sm.Spec.Selector, svc.Labels) {
			t.Errorf("ServiceMonitor selector %v does not select the Service labels %v", sm.Spec.Selector, svc.Labels)
		}
		if sm.Spec.NamespaceSelector == nil || !slices.Contains(sm.Spec.NamespaceSelector.MatchNames, svc.Namespace) {
			t.Errorf("ServiceMonitor namespaceSelector %v does not name the Service's namespace %s", sm.Spec.NamespaceSelector, svc.Namespace)
		}
		if len(sm.Spec.Endpoints) == 0 {
			t.Error("ServiceMonitor has no endpoints")
		}
		for _, e := range sm.Spec.Endpoints {
			if e.Port != "management" || e.Path != "/metrics" {
				t.Errorf("ServiceMonitor endpoint %s%s: want management/metrics", e.Port, e.Path)
			}
		}
	}
}

// mountFor returns the mount whose path is the directory of file and its volume.
func mountFor(t *testing.T, d *appsv1.Deployment, c *corev1.Container, file string) (corev1.VolumeMount, corev1.Volume) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath == filepath.Dir(file) {
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == m.Name {
					return m, v
				}
			}
		}
	}
	t.Fatalf("no volume is mounted at %s (for %s)", filepath.Dir(file), file)
	return corev1.VolumeMount{}, corev1.Volume{}
}

// secretData looks a Secret key up among the rendered Secrets, then among external ones
// (Secrets the installation provides).
func secretData(r *rendered, external map[string]map[string]string, name, key string) (string, bool) {
	if s := r.secret(name); s != nil {
		if v, ok := s.Data[key]; ok {
			return string(v), true
		}
		v, ok := s.StringData[key]
		return v, ok
	}
	v, ok := external[name][key]
	return v, ok
}

var (
	keyOnce sync.Once
	keyPEM  []byte
)

// testKey returns a freshly generated RSA private key in PEM.
func testKey(t *testing.T) []byte {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	})
	return keyPEM
}

// pod is what the app sees when it starts in the rendered Deployment.
type pod struct {
	configFile string            // the settings file, copied from its ConfigMap
	env        map[string]string // the container's environment, Secret references resolved
	privateKey string            // content of the private key file in its Secret
}

// podView resolves the container's --config file from its ConfigMap, its environment (Secret
// references included) and its private key file from its Secret, as the kubelet would. The key
// file is replaced by a generated key (the rendered one is returned in privateKey).
func podView(t *testing.T, r *rendered, external map[string]map[string]string) pod {
	t.Helper()
	d, c := r.deployment(t)
	dir := t.TempDir()

	// --config FILE from the ConfigMap volume.
	i := slices.Index(c.Args, "--config")
	if len(c.Args) < 1 || c.Args[0] != "serve" || i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("container args %v: want serve --config FILE", c.Args)
	}
	cfgPath := c.Args[i+1]
	_, vol := mountFor(t, d, c, cfgPath)
	if vol.ConfigMap == nil {
		t.Fatalf("%s is not mounted from a ConfigMap", cfgPath)
	}
	cm := r.configMap(vol.ConfigMap.Name)
	if cm == nil {
		t.Fatalf("ConfigMap %s (mounted for %s) is not rendered", vol.ConfigMap.Name, cfgPath)
	}
	text, ok := cm.Data[filepath.Base(cfgPath)]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cm.Name, filepath.Base(cfgPath))
	}
	p := pod{configFile: filepath.Join(dir, "config.yml"), env: map[string]string{}}
	if err := os.WriteFile(p.configFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	// Environment, with Secret references resolved.
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			p.env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secretData(r, external, ref.Name, ref.Key)
			if !ok && ref.Optional != nil && *ref.Optional {
				continue // the kubelet leaves an optional variable out
			}
			if !ok {
				t.Fatalf("env %s refers to key %s of Secret %s, which does not exist", e.Name, ref.Key, ref.Name)
			}
			p.env[e.Name] = v
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			p.env[e.Name] = "kalypso-7d9f8b6c5-x2k4p" // the pod's name
		case e.ValueFrom.ResourceFieldRef != nil && !strings.HasPrefix(e.Name, config.EnvPrefix):
			// GOMEMLIMIT: read by the Go runtime, not by the settings.
		default:
			t.Fatalf("env %s: unexpected valueFrom %v", e.Name, e.ValueFrom)
		}
	}

	// The private key file from its Secret volume.
	keyFile := p.env["KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE"]
	if keyFile == "" {
		t.Fatal("KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE is not set: the private key must be mounted as a file")
	}
	_, vol = mountFor(t, d, c, keyFile)
	if vol.Secret == nil {
		t.Fatalf("%s is not mounted from a Secret", keyFile)
	}
	key := filepath.Base(keyFile)
	for _, it := range vol.Secret.Items {
		if it.Path == key {
			key = it.Key
		}
	}
	pk, ok := secretData(r, external, vol.Secret.SecretName, key)
	if !ok {
		t.Fatalf("the private key file %s refers to key %s of Secret %s, which does not exist", keyFile, key, vol.Secret.SecretName)
	}
	p.privateKey = pk
	generated := filepath.Join(dir, "private-key.pem")
	if err := os.WriteFile(generated, testKey(t), 0o600); err != nil {
		t.Fatal(err)
	}
	p.env["KALYPSO_GITHUB_APP_PRIVATE_KEY_FILE"] = generated
	return p
}

// load loads the pod's settings with the app's own config package (strict decoding, then
// validation).
func (p pod) load() (*config.Config, error) {
	return config.Load(p.configFile, func(k string) string { return p.env[k] })
}

// requireIncomplete checks that a settings file decodes strictly and that the only problems of
// its validation are required settings left to the operator (the App ID, the secrets).
func requireIncomplete(t *testing.T, p pod) {
	t.Helper()
	_, err := p.load()
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("settings file: want only missing required settings, got %v", err)
	}
	for _, problem := range ve.Problems {
		if !strings.Contains(problem, "is required") {
			t.Errorf("settings file: %s", problem)
		}
	}
}

// checkCacheVolume checks that a git cache on disk (cache.dir) has a writable emptyDir.
func checkCacheVolume(t *testing.T, r *rendered, dir string) {
	t.Helper()
	d, c := r.deployment(t)
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir {
			_, v := mountFor(t, d, c, filepath.Join(dir, "x"))
			if m.ReadOnly || v.EmptyDir == nil {
				t.Errorf("cache.dir %s: mounted read-only or not from an emptyDir", dir)
			}
			return
		}
	}
	t.Errorf("cache.dir %s has no volume (the root file system is read-only)", dir)
}

func checkNamespace(t *testing.T, r *rendered, want string) {
	t.Helper()
	var metas []metav1.ObjectMeta
	for _, o := range r.deployments {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.services {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.configMaps {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.secrets {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.serviceAccounts {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.pdbs {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range r.ingresses {
		metas = append(metas, o.ObjectMeta)
	}
	for _, m := range metas {
		if m.Namespace != want {
			t.Errorf("%s is in namespace %q, want %q", m.Name, m.Namespace, want)
		}
	}
}

func TestHelmLint(t *testing.T) {
	h := helm(t)
	for _, args := range [][]string{
		{"lint", "--strict", chartDir},
		{"lint", "--strict", chartDir, "-f", fullValues},
	} {
		out := mustRun(t, h, args...)
		if !strings.Contains(out, "0 chart(s) failed") {
			t.Errorf("helm %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

func TestHelmDefaultValues(t *testing.T) {
	out, err := helmTemplate(t)
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	want := []string{"apps/v1/Deployment=1", "policy/v1/PodDisruptionBudget=1", "v1/ConfigMap=1",
		"v1/Secret=1", "v1/Service=1", "v1/ServiceAccount=1"}
	if got := r.kindCounts(); !slices.Equal(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	checkWorkload(t, r)
	checkNamespace(t, r, namespace)
	d, c := r.deployment(t)
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas %d, want 1", *d.Spec.Replicas)
	}
	for _, m := range c.VolumeMounts {
		if m.Name == "cache" {
			t.Errorf("a cache volume is mounted at %s although the cache is in memory by default", m.MountPath)
		}
	}
	if _, ok := d.Spec.Template.Annotations["checksum/config"]; !ok {
		t.Error("no checksum/config annotation: a settings change would not roll the pods")
	}
	// The App ID and the secrets are left to the operator; everything else decodes and validates.
	p := podView(t, r, nil)
	requireIncomplete(t, p)
}

func TestHelmFullValues(t *testing.T) {
	out, err := helmTemplate(t, "-f", fullValues)
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	want := []string{"apps/v1/Deployment=1", "monitoring.coreos.com/v1/ServiceMonitor=1",
		"networking.k8s.io/v1/Ingress=1", "networking.k8s.io/v1/NetworkPolicy=1", "policy/v1/PodDisruptionBudget=1",
		"v1/ConfigMap=2", "v1/Secret=1", "v1/Service=1", "v1/ServiceAccount=1"}
	if got := r.kindCounts(); !slices.Equal(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	checkWorkload(t, r)
	checkNamespace(t, r, namespace)
	if ns := r.serviceMonitors[0].Namespace; ns != "monitoring" {
		t.Errorf("ServiceMonitor namespace %q, want monitoring (serviceMonitor.namespace)", ns)
	}
	if tls := r.ingresses[0].Spec.TLS; len(tls) != 1 || tls[0].SecretName != "kalypso-tls" {
		t.Errorf("Ingress TLS %v, want kalypso-tls", tls)
	}
	d, c := r.deployment(t)
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", *d.Spec.Replicas)
	}
	if !strings.HasSuffix(c.Image, "@sha256:0000000000000000000000000000000000000000000000000000000000000000") {
		t.Errorf("image %s: want the digest", c.Image)
	}

	p := podView(t, r, nil)
	cfg, err := p.load()
	if err != nil {
		t.Fatalf("the pod's settings do not load: %v", err)
	}
	if cfg.GitHub.App.IntegrationID != 1234567 || cfg.Workers != 8 || cfg.Log.Format != "console" || len(cfg.ControlPlanes) != 2 {
		t.Errorf("settings: integrationID %d, workers %d, log.format %s, controlPlanes %v; want the values of %s",
			cfg.GitHub.App.IntegrationID, cfg.Workers, cfg.Log.Format, cfg.ControlPlanes, fullValues)
	}
	if cfg.Server.Address != ":8081" {
		t.Errorf("server.address %q, want :8081 (containerPorts.http)", cfg.Server.Address)
	}
	if cfg.GitHub.App.WebhookSecret.Value() != "0123456789abcdef" {
		t.Error("the webhook secret does not reach the app")
	}
	if p.privateKey != "placeholder-for-the-apps-pem-key" {
		t.Errorf("private key file content %q: want github.privateKey", p.privateKey)
	}
	checkCacheVolume(t, r, cfg.Cache.Dir)
	checkEverySetting(t, p)
}

// checkEverySetting checks that the full values reach every setting of docs/configuration.md,
// through the settings file or the chart's KALYPSO_* variables.
func checkEverySetting(t *testing.T, p pod) {
	t.Helper()
	data, err := os.ReadFile(p.configFile)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := sigsyaml.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if prefix != "" {
			set[prefix] = true
		}
		if m, ok := v.(map[string]any); ok {
			for k, sub := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), sub)
			}
		}
	}
	walk("", tree)
	for _, k := range config.Keys() {
		if _, ok := p.env[k.Env]; ok {
			set[k.Path] = true
		}
	}
	for _, k := range config.Keys() {
		// github.app.privateKey is the inline alternative to the mounted file.
		if k.Path != "github.app.privateKey" && !set[k.Path] {
			t.Errorf("%s does not set %s (%s): add it under config so the chart check covers every setting",
				fullValues, k.Path, k.Env)
		}
	}
}

func TestHelmExistingSecret(t *testing.T) {
	out, err := helmTemplate(t, "--set", "github.existingSecret=kalypso-github",
		"--set", "config.github.app.integrationID=1234567")
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	if len(r.secrets) != 0 {
		t.Errorf("a Secret is rendered although github.existingSecret is set")
	}
	checkWorkload(t, r)
	d, _ := r.deployment(t)
	if _, ok := d.Spec.Template.Annotations["checksum/secret"]; ok {
		t.Error("checksum/secret annotation with an existing Secret")
	}
	p := podView(t, r, map[string]map[string]string{"kalypso-github": {
		"private-key.pem": "fake-key", "webhook-secret": "s3cret",
	}})
	cfg, err := p.load()
	if err != nil {
		t.Fatalf("the pod's settings do not load: %v", err)
	}
	if cfg.GitHub.App.WebhookSecret.Value() != "s3cret" || cfg.GitHub.App.IntegrationID != 1234567 {
		t.Error("the existing Secret's webhook secret or the App ID does not reach the app")
	}
}

func TestHelmCacheOnDisk(t *testing.T) {
	out, err := helmTemplate(t, "--set", "config.cache.dir=/cache/git")
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	checkCacheVolume(t, r, "/cache/git")
	requireIncomplete(t, podView(t, r, nil))
}

func TestHelmRefusesSettingsTheChartManages(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"config.server.address=:80", "use containerPorts.http"},
		{"config.server.managementAddress=:90", "use containerPorts.management"},
		{"config.github.app.webhookSecret=x", "config.github.app.webhookSecret is set by the chart"},
		{"config.github.app.privateKeyFile=/k.pem", "config.github.app.privateKeyFile is set by the chart"},
		{"config.github.app.privateKey=PEM", "config.github.app.privateKey is set by the chart"},
	} {
		_, err := helmTemplate(t, "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: got %v, want an error containing %q", tc.set, err, tc.want)
		}
	}
	_, err := helmTemplate(t, "--set", "github.existingSecret=s", "--set", "github.webhookSecret=x")
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("existingSecret with webhookSecret: got %v, want an error", err)
	}
}

// TestChecksCatchTypos shows that the checks above fail on a misspelt Kubernetes field and on
// a misspelt or mistyped setting of the app.
func TestChecksCatchTypos(t *testing.T) {
	out, err := helmTemplate(t, "--set-json",
		`livenessProbe={"httpGet":{"path":"/healthz","port":"http"},"periodSecond":10}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := decode(out); len(errs) != 1 || !strings.Contains(errs[0].Error(), `Deployment kalypso: error unmarshaling JSON: while decoding JSON: json: unknown field "periodSecond"`) {
		t.Errorf("a misspelt probe field: got %v, want one unknown-field error", errs)
	}

	out, err = helmTemplate(t, "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.relabelings[0].targetLabl=x")
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := decode(out); len(errs) != 1 || !strings.Contains(errs[0].Error(), "targetLabl") {
		t.Errorf("a misspelt ServiceMonitor field: got %v, want one unknown-field error", errs)
	}

	for _, tc := range []struct{ set, want string }{
		{"config.workerz=4", `unknown key "workerz"`},
		{"config.resync.interval=ten", `invalid duration "ten"`},
	} {
		out, err = helmTemplate(t, "--set", tc.set)
		if err != nil {
			t.Fatal(err)
		}
		_, err = podView(t, mustDecode(t, out), nil).load()
		var pe *config.ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: got %v, want a settings-file error containing %s", tc.set, err, tc.want)
		}
	}
}

func TestKustomizeBase(t *testing.T) {
	out := mustRun(t, kustomize(t), "build", kustomizeBase)
	r := mustDecode(t, out)
	want := []string{"apps/v1/Deployment=1", "policy/v1/PodDisruptionBudget=1", "v1/ConfigMap=1", "v1/Service=1", "v1/ServiceAccount=1"}
	if got := r.kindCounts(); !slices.Equal(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	checkWorkload(t, r)
	// The Secret is the installation's: the base only refers to it.
	p := podView(t, r, map[string]map[string]string{"kalypso-github": {
		"private-key.pem": "fake-key", "webhook-secret": "s3cret",
	}})
	requireIncomplete(t, p)
	if p.env["KALYPSO_GITHUB_APP_WEBHOOK_SECRET"] != "s3cret" {
		t.Error("the webhook secret does not come from Secret kalypso-github")
	}
}

// overlayBlock matches the README's YAML blocks that start with "# overlay/FILE".
var overlayBlock = regexp.MustCompile("(?s)```yaml\n# overlay/([a-z.]+)\n(.*?)```")

// TestKustomizeOverlayFromREADME builds the overlay the kustomize README shows, with its remote
// base replaced by the local one, and checks that the pod's settings load.
func TestKustomizeOverlayFromREADME(t *testing.T) {
	readme, err := os.ReadFile(kustomizeREADM)
	if err != nil {
		t.Fatal(err)
	}
	// kustomize accepts only relative bases: copy the base beside the overlay.
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "base"), os.DirFS(kustomizeBase)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "overlay")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const remote = "https://github.com/kalypso-gitops/kalypso//deploy/kustomize?ref=main"
	files := overlayBlock.FindAllStringSubmatch(string(readme), -1)
	if len(files) != 2 {
		t.Fatalf("%s: %d overlay files, want kustomization.yaml and config.yml", kustomizeREADM, len(files))
	}
	for _, f := range files {
		text := f[2]
		if f[1] == "kustomization.yaml" {
			if !strings.Contains(text, remote) {
				t.Fatalf("the README's overlay does not use the base %s", remote)
			}
			text = strings.Replace(text, remote, "../base", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f[1]), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "private-key.pem"), testKey(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "webhook-secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, kustomize(t), "build", dir)
	r := mustDecode(t, out)
	want := []string{"apps/v1/Deployment=1", "policy/v1/PodDisruptionBudget=1", "v1/ConfigMap=1", "v1/Secret=1", "v1/Service=1", "v1/ServiceAccount=1"}
	if got := r.kindCounts(); !slices.Equal(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	checkWorkload(t, r)
	checkNamespace(t, r, "kalypso")
	_, c := r.deployment(t)
	if c.Image != "registry.example.com/platform/kalypso:0.1.0" {
		t.Errorf("image %s: want the overlay's", c.Image)
	}
	p := podView(t, r, nil) // the Secret is generated by the overlay
	cfg, err := p.load()
	if err != nil {
		t.Fatalf("the pod's settings do not load: %v", err)
	}
	if cfg.GitHub.App.IntegrationID != 123456 || cfg.GitHub.App.WebhookSecret.Value() != "s3cret" ||
		!slices.Equal(cfg.ControlPlanes, []string{"my-org/platform-control-plane"}) {
		t.Error("the overlay's App ID, control planes or webhook secret do not reach the app")
	}
	if p.privateKey != string(testKey(t)) {
		t.Error("the mounted private key is not the overlay's private-key.pem")
	}
}
