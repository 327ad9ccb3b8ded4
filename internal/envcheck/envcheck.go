// Package envcheck names an environment's check run, `Kalypso / <env>`, which the reconciler
// writes on each commit it validates or renders for the environment, and writes and reads the
// hold such a check run shows while the environment is held: the reconciler keeps it when it
// reports the commit again, the promoter shows it and takes it away.
package envcheck

import (
	"strings"

	"github.com/kalypso-gitops/kalypso/internal/envref"
)

// Name is the name of an environment's check run.
func Name(env string) string { return "Kalypso / " + env }

// ExternalID identifies an environment's check run across restarts.
func ExternalID(controlPlane envref.Repo, env string) string {
	return "kalypso:" + controlPlane.String() + ":" + env
}

// ParseExternalID reads back the control plane and environment of a check run.
func ParseExternalID(id string) (envref.Repo, string, bool) {
	rest, ok := strings.CutPrefix(id, "kalypso:")
	if !ok {
		return envref.Repo{}, "", false
	}
	slug, env, ok := strings.Cut(rest, ":")
	owner, name, ok2 := strings.Cut(slug, "/")
	return envref.Repo{Owner: owner, Name: name}, env, ok && ok2 && env != ""
}

// Content is what a check run shows: its conclusion, title and summary.
type Content struct {
	Conclusion, Title, Summary string
}

// A held check run's summary starts with the hold between these lines, and its title with
// TitlePrefix; its conclusion is HeldConclusion where it was success.
const (
	holdStart   = "<!-- kalypso-hold -->"
	holdEnd     = "<!-- /kalypso-hold -->"
	TitlePrefix = "Held · "
	// HeldConclusion is the conclusion of a valid commit's check run while a hold keeps it
	// from being promoted automatically, as the "Hold on <env>" check run's: neither a
	// success (it does not go on by itself) nor a failure (nothing is wrong with it; a release
	// or an approval promotes it).
	HeldConclusion = "neutral"
)

// WithHold returns c showing the hold described by paragraph (Markdown, one paragraph) in
// place of any hold it showed. A failed check run keeps its conclusion: the failure says more.
func WithHold(c Content, paragraph string) Content {
	c, _ = WithoutHold(c)
	if c.Conclusion == "success" {
		c.Conclusion = HeldConclusion
	}
	c.Title = TitlePrefix + c.Title
	c.Summary = holdStart + "\n" + strings.TrimSpace(paragraph) + "\n" + holdEnd + "\n\n" + c.Summary
	return c
}

// WithoutHold returns c without the hold it shows, as the reconciler wrote it, and whether it
// showed one.
func WithoutHold(c Content) (Content, bool) {
	if _, ok := HoldOf(c.Summary); !ok {
		return c, false
	}
	_, after, _ := strings.Cut(c.Summary, holdEnd+"\n\n")
	c.Summary = after
	c.Title = strings.TrimPrefix(c.Title, TitlePrefix)
	if c.Conclusion == HeldConclusion {
		c.Conclusion = "success"
	}
	return c, true
}

// HoldOf returns the hold paragraph a check run's summary shows, and whether it shows one.
func HoldOf(summary string) (string, bool) {
	rest, ok := strings.CutPrefix(summary, holdStart+"\n")
	if !ok {
		return "", false
	}
	paragraph, _, ok := strings.Cut(rest, "\n"+holdEnd+"\n\n")
	return paragraph, ok
}
