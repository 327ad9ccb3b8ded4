package githubsim

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
)

// payloadFS holds webhook payload templates (see payloads/README.md).
//
//go:embed payloads/*.json
var payloadFS embed.FS

// PayloadTemplate returns an embedded webhook payload template by file
// name, for example "pull_request.opened.json".
func PayloadTemplate(name string) ([]byte, error) {
	data, err := payloadFS.ReadFile("payloads/" + name)
	if err != nil {
		return nil, fmt.Errorf("githubsim: payload template %s: %w", name, err)
	}
	return data, nil
}

// loadTemplate parses a template; a broken template yields an empty object.
func loadTemplate(name string) map[string]any {
	data, err := PayloadTemplate(name)
	if err != nil {
		return map[string]any{}
	}
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return map[string]any{}
	}
	return m
}

// overlay copies src onto the object dst[key]: nested objects merge,
// other values replace. Keys only in the template keep their values.
func overlay(dst map[string]any, key string, src map[string]any) {
	cur, ok := dst[key].(map[string]any)
	if !ok || src == nil {
		dst[key] = src
		return
	}
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if _, isMap := cur[k].(map[string]any); isMap {
				overlay(cur, k, sub)
				continue
			}
		}
		cur[k] = v
	}
}

// envelope loads a template and sets repository, installation, sender and
// organization for rp.
func (s *Server) envelope(tmpl string, rp *repo, sender string) map[string]any {
	t := loadTemplate(tmpl)
	overlay(t, "repository", s.repoMap(rp))
	t["sender"] = s.userMap(sender)
	t["installation"] = map[string]any{"id": rp.installID, "node_id": nodeID("Installation", rp.installID)}
	delete(t, "organization")
	if s.userType(rp.owner) == "Organization" {
		t["organization"] = s.orgMap(rp.owner)
	}
	return t
}

func (s *Server) orgMap(login string) map[string]any {
	u := s.user(login)
	api := s.base() + "/api/v3/orgs/" + login
	return map[string]any{
		"login": login, "id": u.GetID(), "node_id": u.GetNodeID(), "url": api,
		"repos_url": api + "/repos", "events_url": api + "/events", "hooks_url": api + "/hooks",
		"issues_url": api + "/issues", "members_url": api + "/members{/member}",
		"public_members_url": api + "/public_members{/member}", "avatar_url": u.GetAvatarURL(), "description": "",
	}
}

// newEvent encodes a payload; the action comes from its "action" key.
func newEvent(event string, payload map[string]any) *hookEvent {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil
	}
	action, _ := payload["action"].(string)
	return &hookEvent{event: event, action: action, body: body}
}

// pullTemplate picks the template closest to a pull_request action.
func pullTemplate(action string, merged bool) string {
	switch {
	case action == "closed" && merged:
		return "pull_request.closed.merged.json"
	case action == "closed", action == "synchronize":
		return "pull_request." + action + ".json"
	}
	return "pull_request.opened.json"
}

// shortSHA12 abbreviates a SHA as GitHub's compare links do.
func shortSHA12(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func trimRefPrefix(ref string) string {
	return strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/")
}
