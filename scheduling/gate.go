package scheduling

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Gate is the fractional compliance gate of an environment over the clusters registered in
// the hub: at least MinPercent of them compliant, at most MaxFailed failed. ClusterTypes
// holds the gates of single cluster types, which must hold too.
type Gate struct {
	MinPercent   int
	MaxFailed    int
	ClusterTypes map[string]Gate
}

// DefaultGate requires every registered cluster and tolerates no failure.
func DefaultGate() Gate { return Gate{MinPercent: 100} }

// Required is how many of registered clusters must be compliant: MinPercent of them,
// rounded up.
func (g Gate) Required(registered int) int {
	return (registered*g.MinPercent + 99) / 100
}

// parseGates reads minPercent, maxFailed and clusterTypes of spec.promotion.compliance into
// g; errors are reported at their line.
func parseGates(e *Environment, c *Compliance, g *Gate, errs *Errors) bool {
	ok := readGate(e, "spec.promotion.compliance", c.MinPercent, c.MaxFailed, g, errs)
	for i, ct := range c.ClusterTypes {
		field := fmt.Sprintf("spec.promotion.compliance.clusterTypes[%d]", i)
		if p := validation.IsDNS1123Label(ct.Name); len(p) > 0 {
			errs.Add(e.At(field+".name"), e.Ref(), "%s.name: %q is not a cluster type name: %s", field, ct.Name, strings.Join(p, "; "))
			ok = false
			continue
		}
		if _, dup := g.ClusterTypes[ct.Name]; dup {
			errs.Add(e.At(field+".name"), e.Ref(), "%s.name: cluster type %q has two gates", field, ct.Name)
			ok = false
			continue
		}
		sub := DefaultGate()
		if !readGate(e, field, ct.MinPercent, ct.MaxFailed, &sub, errs) {
			ok = false
		}
		if g.ClusterTypes == nil {
			g.ClusterTypes = map[string]Gate{}
		}
		g.ClusterTypes[ct.Name] = sub
	}
	return ok
}

// readGate checks and sets one gate's minPercent (0 to 100) and maxFailed (not negative).
func readGate(e *Environment, field string, minPercent, maxFailed *int, g *Gate, errs *Errors) bool {
	ok := true
	if minPercent != nil {
		if *minPercent < 0 || *minPercent > 100 {
			errs.Add(e.At(field+".minPercent"), e.Ref(), "%s.minPercent: %d is not a percentage from 0 to 100", field, *minPercent)
			ok = false
		} else {
			g.MinPercent = *minPercent
		}
	}
	if maxFailed != nil {
		if *maxFailed < 0 {
			errs.Add(e.At(field+".maxFailed"), e.Ref(), "%s.maxFailed: must not be negative", field)
			ok = false
		} else {
			g.MaxFailed = *maxFailed
		}
	}
	return ok
}
