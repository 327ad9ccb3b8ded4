// Package githubsim is a stateful, in-process simulation of the parts of
// GitHub that a GitHub App uses: App authentication with installation
// tokens, a REST API under /api/v3 backed by real bare git repositories,
// git smart HTTP, pull requests, check runs, commit statuses, deployments
// and signed webhook deliveries.
//
// It is an http.Handler; it can be served by httptest.NewServer or by
// Server.Start on 127.0.0.1. It does not depend on package testing, so the
// same simulation backs end-to-end tests and the demo command.
package githubsim
