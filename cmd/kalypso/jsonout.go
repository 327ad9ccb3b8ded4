package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/kalypso-gitops/kalypso/internal/preview"
	"github.com/kalypso-gitops/kalypso/render"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// jsonSchemaVersion is the version of the JSON that validate and plan print with --output json
// (docs/json-output.md, checked against docs/schemas/). Fields may be added within a version;
// one that is removed or changes meaning makes a new version.
const jsonSchemaVersion = 1

// outputFlag registers --output on a command that prints text or JSON.
func outputFlag(fs *flag.FlagSet) *string {
	return fs.String("output", "text", "text, or json: one JSON object on stdout in the documented shape (docs/json-output.md)")
}

// checkOutput validates the --output value; false means a usage error was printed.
func checkOutput(cmd, output string, stderr io.Writer) bool {
	if output == "text" || output == "json" {
		return true
	}
	fmt.Fprintf(stderr, "kalypso %s: flag --output: %q is not text or json\n", cmd, output)
	return false
}

// jsonError is one problem with the control plane.
type jsonError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
	Text    string `json:"text"` // the whole line as the text output prints it
}

func jsonErrors(errs scheduling.Errors) []jsonError {
	out := make([]jsonError, 0, len(errs))
	for _, e := range errs {
		out = append(out, jsonError{File: e.Pos.File, Line: e.Pos.Line, Object: e.Object, Message: e.Msg, Text: e.Error()})
	}
	return out
}

// validateReport is what validate --output json prints.
type validateReport struct {
	SchemaVersion     int         `json:"schemaVersion"`
	Command           string      `json:"command"`
	Environment       string      `json:"environment"`
	Valid             bool        `json:"valid"`
	ClusterTypes      int         `json:"clusterTypes"`
	DeploymentTargets int         `json:"deploymentTargets"`
	Assignments       int         `json:"assignments"`
	Errors            []jsonError `json:"errors"`
}

func newValidateReport(res *render.Result) validateReport {
	snap := res.Snapshot
	return validateReport{SchemaVersion: jsonSchemaVersion, Command: "validate", Environment: snap.Environment,
		Valid: len(res.Errors) == 0, ClusterTypes: len(snap.ClusterTypes), DeploymentTargets: len(snap.Targets),
		Assignments: len(res.Assignments), Errors: jsonErrors(res.Errors)}
}

// planReport is what plan --output json prints.
type planReport struct {
	SchemaVersion int             `json:"schemaVersion"`
	Command       string          `json:"command"`
	Environment   string          `json:"environment"`
	Files         planCounts      `json:"files"`
	Groups        []planGroup     `json:"groups"`
	BlastRadius   planBlastRadius `json:"blastRadius"`
	Errors        []jsonError     `json:"errors"`
}

// planCounts counts the files added, changed and removed.
type planCounts struct {
	Added   int `json:"added"`
	Changed int `json:"changed"`
	Removed int `json:"removed"`
}

// planGroup is the changes of one assignment, of a cluster type's own files (DeploymentTarget
// empty), or of the files outside cluster-type folders (ClusterType empty too).
type planGroup struct {
	ClusterType      string       `json:"clusterType"`
	DeploymentTarget string       `json:"deploymentTarget"`
	Files            []planChange `json:"files"`
	Diff             *string      `json:"diff,omitempty"` // with --diff: the unified diffs, whole files
}

// planChange is one file and what happens to it: added, changed or removed.
type planChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
}

// planBlastRadius is the change measured against the Environment's spec.guard.
type planBlastRadius struct {
	AssignmentsBefore  int             `json:"assignmentsBefore"`
	Added              int             `json:"added"`
	Changed            int             `json:"changed"`
	Removed            int             `json:"removed"`
	ClusterTypesBefore int             `json:"clusterTypesBefore"`
	ClusterTypes       int             `json:"clusterTypes"`
	Violations         []planViolation `json:"violations"`
	Accepted           bool            `json:"accepted"`
	Allowed            bool            `json:"allowed"`
}

// planViolation is a limit of spec.guard that the change exceeds.
type planViolation struct {
	Limit    string `json:"limit"`
	Value    string `json:"value"`
	Measured int    `json:"measured"`
	Total    int    `json:"total"`
	Message  string `json:"message"`
}

// guardField names the spec.guard field of a measured figure.
func guardField(what string) string {
	switch what {
	case "added":
		return "maxAdded"
	case "changed":
		return "maxChanged"
	case "removed":
		return "maxRemoved"
	}
	return "maxClusterTypes"
}

// planInput is what runPlan computed.
type planInput struct {
	res        *render.Result
	prev, next render.Tree
	plan       *render.Plan
	blast      preview.Blast
	violations []preview.Violation
	accepted   bool
	withDiff   bool
}

func newPlanReport(in planInput) planReport {
	a, c, r := in.plan.Count()
	rep := planReport{SchemaVersion: jsonSchemaVersion, Command: "plan", Environment: in.res.Snapshot.Environment,
		Files: planCounts{Added: a, Changed: c, Removed: r}, Groups: []planGroup{}, Errors: jsonErrors(in.res.Errors)}
	var sections []preview.Section
	if in.withDiff {
		sections = preview.Sections(in.plan, in.prev, in.next, in.res.Root)
	}
	groups := append([]render.Group(nil), in.plan.Groups...)
	if len(in.plan.Other) > 0 {
		groups = append(groups, render.Group{Changes: in.plan.Other})
	}
	for i, g := range groups {
		pg := planGroup{ClusterType: g.ClusterType, DeploymentTarget: g.Assignment, Files: make([]planChange, 0, len(g.Changes))}
		for _, ch := range g.Changes {
			pg.Files = append(pg.Files, planChange{Path: ch.Path, Change: string(ch.Kind)})
		}
		if i < len(sections) {
			pg.Diff = &sections[i].Diff
		}
		rep.Groups = append(rep.Groups, pg)
	}
	b := in.blast
	rep.BlastRadius = planBlastRadius{AssignmentsBefore: b.Assignments, Added: b.Added, Changed: b.Changed, Removed: b.Removed,
		ClusterTypesBefore: b.ClusterTypes, ClusterTypes: b.Touched, Violations: []planViolation{}, Accepted: in.accepted,
		Allowed: len(in.violations) == 0 || in.accepted}
	for _, v := range in.violations {
		rep.BlastRadius.Violations = append(rep.BlastRadius.Violations, planViolation{Limit: guardField(v.What),
			Value: v.Limit.String(), Measured: v.Measured, Total: v.Total, Message: "the change " + v.String()})
	}
	return rep
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
