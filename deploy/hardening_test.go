package deploy

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kalypso-gitops/kalypso/config"
)

// checkPreStop checks that a stopping pod keeps serving a few seconds before SIGTERM (so that
// webhooks still routed to it during a rolling update are answered), and that the grace period
// covers that delay and the app's graceful shutdown.
func checkPreStop(t *testing.T, d *appsv1.Deployment, c *corev1.Container) {
	t.Helper()
	delay := int64(0)
	if l := c.Lifecycle; l != nil && l.PreStop != nil {
		if l.PreStop.Sleep == nil {
			t.Errorf("preStop %+v: want the sleep action (the distroless image has no sleep binary to exec)", l.PreStop)
			return
		}
		delay = l.PreStop.Sleep.Seconds
	}
	if delay <= 0 {
		t.Error("no preStop delay: webhooks routed to a stopping pod during a rolling update would be refused")
	}
	grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	shutdown := int64(config.Default(func(string) string { return "" }).Server.ShutdownTimeout.Std() / time.Second)
	if grace == nil || *grace <= delay+shutdown {
		t.Errorf("terminationGracePeriodSeconds %v: want more than the preStop delay %d s plus server.shutdownTimeout %d s", grace, delay, shutdown)
	}
}

// checkNetworkPolicy checks the optional NetworkPolicy: it selects the pods, lets in the public
// port from one peer and the management port from another, and lets out only DNS and HTTPS.
func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, podLabels map[string]string, c *corev1.Container) {
	t.Helper()
	if !selects(t, &np.Spec.PodSelector, podLabels) {
		t.Errorf("NetworkPolicy selector %v does not select the pod labels %v", np.Spec.PodSelector, podLabels)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("NetworkPolicy policyTypes %v: want Ingress and Egress", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 2 {
		t.Fatalf("NetworkPolicy: %d ingress rules, want one for the public port and one for the management port", len(np.Spec.Ingress))
	}
	for i, port := range []string{"http", "management"} {
		rule := np.Spec.Ingress[i]
		if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || !portNamed(c, *rule.Ports[0].Port) || rule.Ports[0].Port.String() != port {
			t.Errorf("ingress rule %d ports %v: want only the %s port", i, rule.Ports, port)
		}
		if len(rule.From) != 1 || rule.From[0].NamespaceSelector == nil || rule.From[0].IPBlock != nil ||
			len(rule.From[0].NamespaceSelector.MatchLabels)+len(rule.From[0].NamespaceSelector.MatchExpressions) == 0 {
			t.Errorf("ingress rule %d from %v: want one namespace chosen by label", i, rule.From)
		}
	}
	if metav1.FormatLabelSelector(np.Spec.Ingress[0].From[0].NamespaceSelector) == metav1.FormatLabelSelector(np.Spec.Ingress[1].From[0].NamespaceSelector) &&
		metav1.FormatLabelSelector(np.Spec.Ingress[0].From[0].PodSelector) == metav1.FormatLabelSelector(np.Spec.Ingress[1].From[0].PodSelector) {
		t.Error("the ingress controller and the monitoring reach the same ports: want the management port for monitoring only")
	}
	ports := map[string]bool{}
	for _, rule := range np.Spec.Egress {
		for _, p := range rule.Ports {
			ports[string(*p.Protocol)+"/"+p.Port.String()] = true
		}
	}
	for _, want := range []string{"UDP/53", "TCP/53", "TCP/443"} {
		if !ports[want] {
			t.Errorf("NetworkPolicy egress %v: want %s", ports, want)
		}
	}
}

func TestHelmNetworkPolicyDefaults(t *testing.T) {
	out, err := helmTemplate(t, "--set", "networkPolicy.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	checkWorkload(t, r)
	if len(r.networkPolicies) != 1 {
		t.Fatalf("%d NetworkPolicies, want 1", len(r.networkPolicies))
	}
	egress := r.networkPolicies[0].Spec.Egress
	https := egress[len(egress)-1]
	if len(https.To) != 2 || https.To[0].IPBlock.CIDR != "0.0.0.0/0" || https.To[1].IPBlock.CIDR != "::/0" ||
		https.Ports[0].Port.IntValue() != 443 {
		t.Errorf("egress to GitHub %+v: want HTTPS to any address by default", https)
	}
	if got := r.networkPolicies[0].Spec.Ingress[1].Ports[0].Port; *got != intstr.FromString("management") {
		t.Errorf("monitoring reaches %v", got)
	}
}

// The chart's values.schema.json rejects a misspelt or mistyped value before anything renders.
func TestHelmSchemaRejectsTypos(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"ingres.enabled=true", "additional properties 'ingres' not allowed"},
		{"ingress.enabeld=true", "additional properties 'enabeld' not allowed"},
		{"replicaCount=two", "/replicaCount"},
		{"image.digest=sha1:abc", "/image/digest"},
		{"networkPolicy.github.ports[0]=0", "/networkPolicy/github/ports/0"},
		{"github.secretKeys.webhookSecret=", "/github/secretKeys/webhookSecret"},
		{"hub.grafanaDashboard.enable=true", "additional properties 'enable' not allowed"},
		{"hub.grafanaDashboard.enabled=yes", "/hub/grafanaDashboard/enabled"},
	} {
		_, err := helmTemplate(t, "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: got %v, want a schema error naming %s", tc.set, err, tc.want)
		}
	}
	// Kubernetes objects and the app's settings are passed through (checked by the API server
	// and by the app).
	if _, err := helmTemplate(t, "--set", "resources.limits.cpu=2", "--set", "config.log.level=debug"); err != nil {
		t.Error(err)
	}
}

// With the fleet view on, its client secret and session key reach the app from the Secret, the
// chart's or an existing one, never from the ConfigMap.
func TestHelmFleetSecretsComeFromTheSecret(t *testing.T) {
	fleet := []string{"--set", "config.github.app.integrationID=1234567", "--set", "config.fleet.enabled=true",
		"--set", "config.fleet.publicURL=https://kalypso.example.com", "--set", "config.fleet.clientID=Iv1.abc"}
	out, err := helmTemplate(t, append(fleet, "--set", "github.existingSecret=kalypso-secrets")...)
	if err != nil {
		t.Fatal(err)
	}
	r := mustDecode(t, out)
	if len(r.secrets) != 0 {
		t.Error("a Secret is rendered although github.existingSecret is set")
	}
	p := podView(t, r, map[string]map[string]string{"kalypso-secrets": {
		"private-key.pem": string(testKey(t)), "webhook-secret": "s3cret",
		"fleet-client-secret": "oauth-secret", "fleet-session-key": strings.Repeat("k", 32),
	}})
	cfg, err := p.load()
	if err != nil {
		t.Fatalf("the pod's settings do not load: %v", err)
	}
	if cfg.Fleet.ClientSecret.Value() != "oauth-secret" || cfg.Fleet.SessionKey.Value() != strings.Repeat("k", 32) {
		t.Error("the fleet secrets of the existing Secret do not reach the app")
	}
	if strings.Contains(r.configMap(r.configMaps[0].Name).Data["config.yml"], "oauth-secret") {
		t.Error("a secret in the ConfigMap")
	}

	out, err = helmTemplate(t, append(fleet, "--set", "github.fleetClientSecret=created-secret",
		"--set", "github.fleetSessionKey="+strings.Repeat("s", 40))...)
	if err != nil {
		t.Fatal(err)
	}
	r = mustDecode(t, out)
	cfg2 := podView(t, r, nil).env
	if cfg2["KALYPSO_FLEET_CLIENT_SECRET"] != "created-secret" || cfg2["KALYPSO_FLEET_SESSION_KEY"] != strings.Repeat("s", 40) {
		t.Errorf("the chart's Secret does not carry the fleet secrets: %v", cfg2)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "config.fleet.clientSecret=x"}, "config.fleet.clientSecret is set by the chart"},
		{[]string{"--set", "config.fleet.sessionKey=x"}, "config.fleet.sessionKey is set by the chart"},
		{[]string{"--set", "github.fleetClientSecret=x"}, "only with config.fleet.enabled=true"},
		{append(fleet, "--set", "github.existingSecret=s", "--set", "github.fleetSessionKey=x"), "not both"},
	} {
		_, err := helmTemplate(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
