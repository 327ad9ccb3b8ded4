package scheduling

import (
	"fmt"
	"sort"
)

// keepOnlyWorkloads drops everything but Workload objects from what a workload repository
// holds, reporting each dropped object at its file and line: a workload repository is data
// owned by an application team, and may not bring templates, configs, targets or anything
// else that could reach other teams' assignments.
func (o *objects) keepOnlyWorkloads(errs *Errors) {
	var dropped []*Object
	for _, list := range [][]*Object{
		refs(o.environments), refs(o.baseRepos), refs(o.gitopsRepos), refs(o.registrations),
		refs(o.targets), refs(o.clusterTypes), refs(o.templates), refs(o.policies), refs(o.schemas),
		refs(o.configMaps), o.foreign,
	} {
		dropped = append(dropped, list...)
	}
	var broken []*Object
	for _, b := range o.broken {
		if b.Kind == KindWorkload {
			broken = append(broken, b)
		} else {
			dropped = append(dropped, b)
		}
	}
	for _, d := range dropped {
		errs.Add(d.Pos, d.Ref(), "only Workload objects are read from a workload repository; this %s is ignored", kindOrDocument(d.Kind))
	}
	*o = objects{workloads: o.workloads, broken: broken, unreadable: o.unreadable}
}

// refs returns the objects of a list of loaded objects.
func refs[T named](list []T) []*Object {
	out := make([]*Object, len(list))
	for i, x := range list {
		out[i] = x.obj()
	}
	return out
}

func kindOrDocument(kind string) string {
	if kind == "" {
		return "document"
	}
	return kind
}

// bySeniority orders workloads so that those of older registrations come first, when two
// registrations deliver the same name: de-duplication then keeps the older one's. Only the
// registrations that share a name are aged (it may read the control plane's history); the
// others keep their order by registration name.
func bySeniority(ws []*Workload, seniority func(*WorkloadRegistration) int64, checks map[*Workload]*targetChecks, idx *nameIndex) {
	sharing := sharingNames(ws, checks, idx)
	if seniority == nil || len(sharing) == 0 {
		return
	}
	age := map[*WorkloadRegistration]int64{}
	for r := range sharing {
		age[r] = seniority(r)
	}
	sort.SliceStable(ws, func(i, j int) bool {
		return age[ws[i].Registration] < age[ws[j].Registration]
	})
}

// sharingNames returns the registrations whose workloads produce a Workload or deployment-target
// name that another registration's workloads also produce (a-b with target c and a with target
// b-c both give a-b-c).
func sharingNames(ws []*Workload, checks map[*Workload]*targetChecks, idx *nameIndex) map[*WorkloadRegistration]bool {
	out := map[*WorkloadRegistration]bool{}
	for _, ps := range sharedNames(ws, checks, idx) {
		if regs := registrationsOf(ps); len(regs) > 1 {
			for r := range regs {
				out[r] = true
			}
		}
	}
	delete(out, nil)
	return out
}

// withoutContested keeps out the workloads that produce a Workload or deployment-target name
// another registration's workloads also produce, when nothing tells which registration is
// older (no history, as in the command line's directory mode): neither gets the name. Each is
// reported at its file, naming the other's, and returned as broken, so that the targets keep
// their last good output and nothing is removed.
func withoutContested(ws []*Workload, errs *Errors, checks map[*Workload]*targetChecks, idx *nameIndex) (kept []*Workload, contested []*Object) {
	out := map[*Workload]bool{}
	for _, ps := range sharedNames(ws, checks, idx) {
		if len(registrationsOf(ps)) < 2 {
			continue
		}
		for _, p := range ps {
			for _, other := range ps {
				if other.w.Registration != p.w.Registration {
					errs.Add(p.w.Pos, p.w.Ref(), "%s is also produced at %s (registration %q); without the control plane's history to tell which registration is older, neither is rendered (their last output stays)",
						p.what(), other.w.Pos, registrationName(other.w))
					break
				}
			}
			out[p.w] = true
		}
	}
	if len(out) == 0 {
		return ws, nil
	}
	for _, w := range ws {
		if out[w] {
			o := w.Object
			contested = append(contested, &o)
			continue
		}
		kept = append(kept, w)
	}
	return kept, contested
}

// nameProducer is a workload producing a contested name: its own, or a deployment target's.
type nameProducer struct {
	w      *Workload
	target string // the deployment target's name; "" for the Workload's own name
}

// what names the produced name's kind and value, for messages.
func (p nameProducer) what() string {
	if p.target == "" {
		return ObjectRef(KindWorkload, p.w.Name)
	}
	return fmt.Sprintf("deployment target name %q", p.target)
}

func registrationName(w *Workload) string {
	if w.Registration == nil {
		return ""
	}
	return w.Registration.Name
}
