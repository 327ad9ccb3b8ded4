// Package githubsim is a stateful, in-process simulation of the parts of
// GitHub that a GitHub App uses: App authentication with installation
// tokens, a REST API under /api/v3 backed by real bare git repositories,
// git smart HTTP, pull requests, check runs, commit statuses, deployments
// and signed webhook deliveries.
//
// It is an http.Handler; it can be served by httptest.NewServer or by
// Server.Start on 127.0.0.1. It does not depend on package testing, so the
// same simulation backs end-to-end tests and the demo command.
//
// Typical use:
//
//	sim, _ := githubsim.New(githubsim.Options{Dir: dir})
//	_ = sim.Start()
//	defer sim.Close()
//	inst := sim.CreateInstallation("contoso")
//	_ = sim.CreateRepo(inst, "contoso", "gitops", "main")
//	_, _ = sim.CommitFiles("contoso", "gitops", "main", files, "seed")
//	sim.SetWebhook(appURL+"/api/github/hook", secret)
//
// Point go-githubapp at it with Config.V3APIURL = sim.APIURL(),
// App.IntegrationID = sim.AppID() and App.PrivateKey = sim.PrivateKeyPEM();
// clone and push with sim.GitURL and basic auth x-access-token:<token>.
// Calls counts REST calls by route ("POST /repos/{owner}/{repo}/git/trees"),
// InjectFault fails the next matching calls, and Deliveries, Redeliver,
// PauseWebhooks and DropWebhooks control the webhook outbox.
//
// Webhooks are sent synchronously by default: a REST call that changes
// state returns after the App's webhook handler answered. An App that
// holds a lock while it calls the API and needs the same lock in its
// webhook handler should use SetWebhookMode(WebhooksAsync). As GitHub, it
// never sends a payload over 25 MB (MaxWebhookPayloadBytes): the event is
// recorded as a delivery in state DeliveryTooLarge, and not sent.
package githubsim
