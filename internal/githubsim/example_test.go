package githubsim_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/google/go-github/v62/github"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/kalypso-gitops/kalypso/internal/githubsim"
)

// Example starts the simulator, seeds a repository, points a go-githubapp
// client creator at it, receives a webhook and reads the call counts.
func Example() {
	dir, err := os.MkdirTemp("", "githubsim-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sim, err := githubsim.New(githubsim.Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	if err := sim.Start(); err != nil {
		panic(err)
	}
	defer sim.Close()

	inst := sim.CreateInstallation("contoso")
	if err := sim.CreateRepo(inst, "contoso", "gitops", "main"); err != nil {
		panic(err)
	}
	readme := "# gitops\n"
	if _, err := sim.CommitFiles("contoso", "gitops", "main", map[string]*string{"README.md": &readme}, "seed"); err != nil {
		panic(err)
	}

	// The App's webhook endpoint (normally githubapp.NewDefaultEventDispatcher).
	events := make(chan string, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Hub-Signature-256") == githubsim.Sign("secret", body) {
			events <- github.WebHookType(r)
		}
	}))
	defer hook.Close()
	sim.SetWebhook(hook.URL, "secret")

	var cfg githubapp.Config
	cfg.V3APIURL = sim.APIURL()
	cfg.App.IntegrationID = sim.AppID()
	cfg.App.PrivateKey = string(sim.PrivateKeyPEM())
	cfg.App.WebhookSecret = "secret"
	cc, err := githubapp.NewDefaultCachingClientCreator(cfg)
	if err != nil {
		panic(err)
	}
	client, err := cc.NewInstallationClient(inst)
	if err != nil {
		panic(err)
	}
	sha, err := sim.BranchSHA("contoso", "gitops", "main")
	if err != nil {
		panic(err)
	}
	ref := "refs/heads/gitops/dev"
	_, _, err = client.Git.CreateRef(context.Background(), "contoso", "gitops", &github.Reference{Ref: &ref, Object: &github.GitObject{SHA: &sha}})
	if err != nil {
		panic(err)
	}
	fmt.Println(<-events)
	fmt.Println(sim.CallCount("POST /repos/{owner}/{repo}/git/refs"))
	// Output:
	// push
	// 1
}
