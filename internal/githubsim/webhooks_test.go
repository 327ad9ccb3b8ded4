package githubsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestSignMatchesGitHubVector(t *testing.T) {
	// Test vector from GitHub's "Validating webhook deliveries".
	require.Equal(t, "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		Sign("It's a Secret to Everybody", []byte("Hello, World!")))
}

func TestDeliveryHeaders(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "x", map[string]*string{"x": ptr("x")})
	ds := f.sim.Deliveries()
	d := ds[len(ds)-1]
	require.Equal(t, DeliveryDelivered, d.State)
	require.Equal(t, http.StatusOK, d.StatusCode)
	require.Equal(t, "push", d.Header.Get("X-GitHub-Event"))
	require.Equal(t, d.ID, d.Header.Get("X-GitHub-Delivery"))
	require.Equal(t, Sign(testSecret, d.Body), d.Header.Get("X-Hub-Signature-256"))
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, d.ID)
	ids := map[string]bool{}
	for _, d := range ds {
		require.False(t, ids[d.ID], "delivery IDs are unique")
		ids[d.ID] = true
	}
	var payload map[string]any
	require.NoError(t, json.Unmarshal(d.Body, &payload))
	inst := payload["installation"].(map[string]any)
	require.EqualValues(t, f.inst, inst["id"])
	require.Equal(t, testOwner, payload["organization"].(map[string]any)["login"])
}

func TestDeliveryStatesAreDeliveriesWithoutBodies(t *testing.T) {
	f := newFixture(t)
	f.branch(t, "x", map[string]*string{"x": ptr("x")})
	full, states := f.sim.Deliveries(), f.sim.DeliveryStates()
	require.Len(t, states, len(full))
	for i := range full {
		require.NotEmpty(t, full[i].Body)
		require.Nil(t, states[i].Body)
		full[i].Body = nil
		require.Equal(t, full[i], states[i])
	}
}

func TestPauseDropRedeliver(t *testing.T) {
	f := newFixture(t)
	f.sim.PauseWebhooks()
	f.branch(t, "a", map[string]*string{"a": ptr("a")})
	f.branch(t, "b", map[string]*string{"b": ptr("b")})
	require.Empty(t, f.hooks.all(), "paused deliveries are held")
	f.sim.ResumeWebhooks()
	refs := func() []string {
		var out []string
		for _, r := range f.hooks.all() {
			out = append(out, r.payload.(*github.PushEvent).GetRef())
		}
		return out
	}
	require.Equal(t, []string{"refs/heads/a", "refs/heads/b"}, refs(), "held deliveries keep their order")

	f.sim.DropWebhooks(true)
	f.branch(t, "c", map[string]*string{"c": ptr("c")})
	f.sim.DropWebhooks(false)
	ds := f.sim.Deliveries()
	dropped := ds[len(ds)-1]
	require.Equal(t, DeliveryDropped, dropped.State)
	require.Len(t, f.hooks.all(), 2)
	again, err := f.sim.Redeliver(dropped.ID)
	require.NoError(t, err)
	require.Equal(t, DeliveryDelivered, again.State)
	got := f.hooks.all()[2]
	require.Equal(t, dropped.ID, got.delivery)
	require.Equal(t, dropped.Body, got.body)
	_, err = f.sim.Redeliver("nope")
	require.Error(t, err)
}

func TestReceiverFailuresAreRecorded(t *testing.T) {
	f := newFixture(t)
	f.hooks.setStatus(http.StatusInternalServerError)
	f.branch(t, "a", map[string]*string{"a": ptr("a")})
	ds := f.sim.Deliveries()
	require.Equal(t, http.StatusInternalServerError, ds[len(ds)-1].StatusCode)
	f.sim.SetWebhook("http://127.0.0.1:1/hook", testSecret)
	f.branch(t, "b", map[string]*string{"b": ptr("b")})
	ds = f.sim.Deliveries()
	require.Equal(t, DeliveryFailed, ds[len(ds)-1].State)
	require.NotEmpty(t, ds[len(ds)-1].Error)
}

func TestAsyncAndEventFilter(t *testing.T) {
	f := newFixture(t)
	f.sim.SetWebhookMode(WebhooksAsync)
	f.sim.SetWebhookEvents("pull_request")
	f.branch(t, "a", map[string]*string{"a": ptr("a")})
	f.openPull(t, "a")
	f.sim.WaitWebhooks()
	require.Equal(t, []string{"pull_request.opened"}, f.hooks.events())
	f.sim.SetWebhookEvents()
	f.branch(t, "a", map[string]*string{"b": ptr("b")})
	f.sim.WaitWebhooks()
	require.Equal(t, []string{"pull_request.opened", "push.", "pull_request.synchronize"}, f.hooks.events())
}

func TestPayloadTemplatesParse(t *testing.T) {
	entries, err := payloadFS.ReadDir("payloads")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		n++
		data, err := PayloadTemplate(e.Name())
		require.NoError(t, err)
		require.True(t, json.Valid(data), e.Name())
	}
	require.Equal(t, 18, n)
}

// A payload over GitHub's 25 MB cap is not delivered, nor redelivered: it is recorded as such,
// and the deliveries after it are sent as usual.
func TestPayloadsOverTheCapAreNotDelivered(t *testing.T) {
	f := newFixture(t)
	huge := strings.Repeat("m", MaxWebhookPayloadBytes+1) // the commit's message: the payload is larger
	_, err := f.sim.CommitFiles(testOwner, testRepo, "huge", map[string]*string{"a": ptr("a")}, huge)
	require.NoError(t, err)
	ds := f.sim.Deliveries()
	tooLarge := ds[len(ds)-1]
	require.Equal(t, DeliveryTooLarge, tooLarge.State)
	require.Equal(t, "push", tooLarge.Event)
	require.Zero(t, tooLarge.Attempts)
	require.Nil(t, tooLarge.Body, "the payload is not kept")
	require.Contains(t, tooLarge.Error, "not delivered")
	require.Empty(t, f.hooks.all(), "nothing was sent")

	again, err := f.sim.Redeliver(tooLarge.ID)
	require.ErrorContains(t, err, "never sent")
	require.Equal(t, DeliveryTooLarge, again.State)
	require.Empty(t, f.hooks.all(), "nor sent again")

	f.branch(t, "small", map[string]*string{"b": ptr("b")})
	require.Len(t, f.hooks.all(), 1)
	require.Equal(t, "refs/heads/small", f.hooks.all()[0].payload.(*github.PushEvent).GetRef())
}
