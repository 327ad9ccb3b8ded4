package githubsim

import (
	"slices"
	"unicode/utf8"
)

// GitHub's documented limits for check runs.
const (
	maxOutputChars        = 65535
	maxAnnotationsPerCall = 50
	maxActions            = 3
	maxActionLabel        = 20
	maxActionDesc         = 40
	maxActionIdentifier   = 20
)

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
	annotationLevels = []string{"notice", "warning", "failure"}
)

// validateCheckRun enforces GitHub's rules on a create or update body.
func validateCheckRun(in *checkRunInput) error {
	if in.Status != nil && !slices.Contains(checkStatuses, *in.Status) {
		return validation("CheckRun", "status", "status %q is not a valid value", *in.Status)
	}
	if in.Conclusion != nil && !slices.Contains(checkConclusions, *in.Conclusion) {
		return validation("CheckRun", "conclusion", "conclusion %q is not a valid value", *in.Conclusion)
	}
	if in.Status != nil && *in.Status == "completed" && in.Conclusion == nil {
		return validation("CheckRun", "conclusion", "conclusion is required when status is completed")
	}
	if err := validateOutput(in); err != nil {
		return err
	}
	return validateActions(in)
}

func validateOutput(in *checkRunInput) error {
	o := in.Output
	if o == nil {
		return nil
	}
	if o.Title == nil || o.Summary == nil {
		return validation("CheckRun", "output", "output.title and output.summary are required")
	}
	if utf8.RuneCountInString(o.GetSummary()) > maxOutputChars {
		return validation("CheckRun", "output.summary", "summary is too long (maximum is %d characters)", maxOutputChars)
	}
	if utf8.RuneCountInString(o.GetText()) > maxOutputChars {
		return validation("CheckRun", "output.text", "text is too long (maximum is %d characters)", maxOutputChars)
	}
	if len(o.Annotations) > maxAnnotationsPerCall {
		return validation("CheckRun", "output.annotations", "annotations: at most %d per request", maxAnnotationsPerCall)
	}
	for _, a := range o.Annotations {
		if a.Path == nil || a.StartLine == nil || a.EndLine == nil || a.Message == nil ||
			!slices.Contains(annotationLevels, a.GetAnnotationLevel()) {
			return validation("CheckRun", "output.annotations", "annotations need path, start_line, end_line, annotation_level and message")
		}
		if (a.StartColumn != nil || a.EndColumn != nil) && a.GetStartLine() != a.GetEndLine() {
			return validation("CheckRun", "output.annotations", "start_column and end_column need start_line == end_line")
		}
	}
	return nil
}

func validateActions(in *checkRunInput) error {
	if len(in.Actions) > maxActions {
		return validation("CheckRun", "actions", "at most %d actions are allowed", maxActions)
	}
	for _, a := range in.Actions {
		switch {
		case a.Label == "" || a.Description == "" || a.Identifier == "":
			return validation("CheckRun", "actions", "actions need label, description and identifier")
		case utf8.RuneCountInString(a.Label) > maxActionLabel:
			return validation("CheckRun", "actions", "label is too long (maximum is %d characters)", maxActionLabel)
		case utf8.RuneCountInString(a.Description) > maxActionDesc:
			return validation("CheckRun", "actions", "description is too long (maximum is %d characters)", maxActionDesc)
		case utf8.RuneCountInString(a.Identifier) > maxActionIdentifier:
			return validation("CheckRun", "actions", "identifier is too long (maximum is %d characters)", maxActionIdentifier)
		}
	}
	return nil
}

// checkRunMap is the check-run response object. The caller holds rp.mu.
func (s *Server) checkRunMap(rp *repo, cr *checkRun) map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	self := api + "/check-runs/" + itoa64(cr.id)
	return map[string]any{
		"id": cr.id, "head_sha": cr.headSHA, "node_id": nodeID("CheckRun", cr.id),
		"external_id": cr.externalID, "url": self,
		"html_url":    s.base() + "/" + rp.fullName() + "/runs/" + itoa64(cr.id),
		"details_url": nullable(cr.detailsURL), "status": cr.status, "conclusion": nullable(cr.conclusion),
		"started_at": tsOrNil(cr.startedAt), "completed_at": tsOrNil(cr.completedAt),
		"output": map[string]any{
			"title": ptrOrNil(cr.title), "summary": ptrOrNil(cr.summary), "text": ptrOrNil(cr.text),
			"annotations_count": len(cr.annotations), "annotations_url": self + "/annotations",
		},
		"name":          cr.name,
		"check_suite":   map[string]any{"id": cr.suiteID},
		"app":           s.appMap(),
		"pull_requests": s.minimalPulls(rp, cr.headSHA),
	}
}

func ptrOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// minimalPulls lists open pull requests whose head is sha.
func (s *Server) minimalPulls(rp *repo, sha string) []map[string]any {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	out := []map[string]any{}
	repoRef := map[string]any{"id": rp.id, "url": api, "name": rp.name}
	for _, pr := range rp.pulls {
		if pr.state != "open" || pr.headSHA != sha {
			continue
		}
		out = append(out, map[string]any{
			"id": pr.id, "number": pr.number, "url": api + "/pulls/" + itoa(pr.number),
			"head": map[string]any{"ref": pr.head, "sha": pr.headSHA, "repo": repoRef},
			"base": map[string]any{"ref": pr.base, "sha": pr.baseSHA, "repo": repoRef},
		})
	}
	return out
}
