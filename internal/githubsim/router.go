package githubsim

import (
	"net/url"
	"sort"
	"strings"
)

// authKind says which credentials a route accepts.
type authKind int

const (
	authToken authKind = iota // installation token
	authJWT                   // App JWT
	authBasic                 // the App's OAuth client ID and secret (basic authentication)
)

// route is one REST operation. Its pattern uses {name} for one path segment
// and {name...} for one or more segments, possibly followed by literals.
type route struct {
	method  string
	pattern string
	segs    []string
	lits    int
	auth    authKind
	handler handlerFunc
}

type router struct {
	routes []*route
}

func (rt *router) add(method, pattern string, auth authKind, h handlerFunc) {
	segs := strings.Split(strings.Trim(pattern, "/"), "/")
	lits := 0
	for _, s := range segs {
		if !strings.HasPrefix(s, "{") {
			lits++
		}
	}
	rt.routes = append(rt.routes, &route{method: method, pattern: pattern, segs: segs, lits: lits, auth: auth, handler: h})
	sort.SliceStable(rt.routes, func(i, j int) bool { return rt.routes[i].lits > rt.routes[j].lits })
}

// name is the route's key in call counts: "METHOD /pattern" with "..." removed.
func (r *route) name() string {
	return r.method + " " + strings.ReplaceAll(r.pattern, "...}", "}")
}

// match finds the route for method and escaped path (relative to /api/v3).
func (rt *router) match(method, escapedPath string) (*route, map[string]string, bool) {
	parts := strings.Split(strings.Trim(escapedPath, "/"), "/")
	pathFound := false
	for _, r := range rt.routes {
		params := map[string]string{}
		if !matchSegs(r.segs, parts, params) {
			continue
		}
		pathFound = true
		if r.method == method {
			return r, params, true
		}
	}
	return nil, nil, pathFound
}

func matchSegs(segs, parts []string, params map[string]string) bool {
	if len(segs) == 0 {
		return len(parts) == 0 || (len(parts) == 1 && parts[0] == "")
	}
	seg := segs[0]
	if strings.HasSuffix(seg, "...}") {
		name := seg[1 : len(seg)-4]
		rest := len(segs) - 1
		for n := len(parts) - rest; n >= 0; n-- {
			if n == 0 && rest > 0 {
				break
			}
			if matchSegs(segs[1:], parts[n:], params) {
				params[name] = joinUnescaped(parts[:n])
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if strings.HasPrefix(seg, "{") {
		if parts[0] == "" {
			return false
		}
		params[seg[1:len(seg)-1]] = unescape(parts[0])
		return matchSegs(segs[1:], parts[1:], params)
	}
	return seg == parts[0] && matchSegs(segs[1:], parts[1:], params)
}

func joinUnescaped(parts []string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = unescape(p)
	}
	return strings.Join(out, "/")
}

func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}
