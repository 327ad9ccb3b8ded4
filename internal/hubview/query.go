// Package hubview serves the hub's answers behind the fleet view's sign-in: as JSON under
// /api/v1/hub/ and as server-rendered pages under /fleet/hub (no JavaScript). A user sees
// only the control planes whose repositories they can read.
package hubview

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
)

// query holds the validated parameters of a request.
type query struct {
	ControlPlane, Environment, ClusterType, Cluster, After, From, To, Workload string
	Limit, Days                                                                int
}

var (
	repoRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$`)
	clusterRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
)

// errBadQuery is a parameter that is not valid; its message names it.
type errBadQuery string

func (e errBadQuery) Error() string { return string(e) }

// parseQuery validates every parameter present; names are checked to their formats.
func parseQuery(r *http.Request) (query, error) {
	v := r.URL.Query()
	q := query{ControlPlane: v.Get("controlPlane"), Environment: v.Get("environment"), ClusterType: v.Get("clusterType"),
		Cluster: v.Get("cluster"), After: v.Get("after"), From: v.Get("from"), To: v.Get("to"), Workload: v.Get("workload")}
	if q.ControlPlane != "" && !repoRE.MatchString(q.ControlPlane) {
		return q, errBadQuery("controlPlane must be OWNER/REPO")
	}
	for name, val := range map[string]string{"environment": q.Environment, "clusterType": q.ClusterType, "from": q.From, "to": q.To, "workload": q.Workload} {
		if val != "" && len(validation.IsDNS1123Label(val)) > 0 {
			return q, errBadQuery(name + " is not a name (lowercase letters, digits and '-')")
		}
	}
	for name, val := range map[string]string{"cluster": q.Cluster, "after": q.After} {
		if val != "" && !clusterRE.MatchString(val) {
			return q, errBadQuery(name + " is not a cluster name")
		}
	}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), 100, 1, 1000, "limit"); err != nil {
		return q, err
	}
	q.Days, err = intParam(v.Get("days"), 30, 1, 365, "days")
	return q, err
}

func intParam(s string, def, lo, hi int, name string) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errBadQuery(fmt.Sprintf("%s must be a whole number from %d to %d", name, lo, hi))
	}
	return n, nil
}

// need checks that the parameters a view requires are there.
func (q query) need(names ...string) error {
	for _, n := range names {
		val := map[string]string{"controlPlane": q.ControlPlane, "environment": q.Environment, "cluster": q.Cluster, "from": q.From, "to": q.To}[n]
		if val == "" {
			return errBadQuery(n + " is required")
		}
	}
	return nil
}
