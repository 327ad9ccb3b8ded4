package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/store"
)

// users maps tokens to access, for the control plane o/cp only.
type users map[string]Access

func (u users) Access(_ context.Context, token, repo string) (Access, error) {
	a, ok := u[token]
	if !ok || token == "" {
		return Access{}, ErrUnauthenticated
	}
	if repo != "o/cp" {
		return Access{Login: a.Login}, nil
	}
	return a, nil
}

func newTrail(t *testing.T) *store.Store {
	t.Helper()
	var mu sync.Mutex
	now := time.Date(2026, 3, 29, 8, 0, 0, 0, time.UTC)
	st, err := store.Open(context.Background(), store.Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	ctx := WithDelivery(context.Background(), "d-1")
	for i, r := range []struct {
		kind string
		rec  Record
	}{
		{KindPin, Record{ControlPlane: "o/cp", Environment: "dev", Commit: "aaa111", Previous: "999000", Reason: "push to main"}},
		{KindApproval, Record{Actor: "alice", ControlPlane: "o/cp", Environment: "stage", Commit: "aaa111", Reason: "approval 1 of 2"}},
		{KindRefusal, Record{Actor: "bob", ControlPlane: "o/cp", Environment: "stage", Commit: "aaa111", Reason: "four eyes"}},
		{KindPin, Record{Actor: "alice", ControlPlane: "o/other", Environment: "stage", Commit: "bbb222"}},
	} {
		mu.Lock()
		now = time.Date(2026, 3, 29, 8, 1+i, 0, 0, time.UTC) // entry i+1 at 08:0(i+1)
		mu.Unlock()
		require.NoError(t, Append(ctx, st, r.kind, r.rec))
	}
	return st
}

func get(t *testing.T, api *API, token, query string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	api.Register(mux)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/audit?"+query, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

func TestAuditAPI(t *testing.T) {
	api := &API{Trail: newTrail(t), Users: users{"reader": {Login: "r", Read: true}, "stranger": {Login: "s"}}, Logger: zerolog.Nop()}
	require.Equal(t, http.StatusUnauthorized, get(t, api, "", "controlPlane=o/cp").Code)
	require.Equal(t, http.StatusForbidden, get(t, api, "stranger", "controlPlane=o/cp").Code)
	require.Equal(t, http.StatusBadRequest, get(t, api, "reader", "controlPlane=nope").Code)
	require.Equal(t, http.StatusBadRequest, get(t, api, "reader", "controlPlane=o/cp&limit=5000").Code)

	var page Page
	rec := get(t, api, "reader", "controlPlane=o/cp")
	require.Equal(t, http.StatusOK, rec.Code)
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	require.Len(t, page.Entries, 3, "only the control plane asked for")
	first := page.Entries[0]
	require.Equal(t, KindPin, first.Kind)
	require.Equal(t, App, first.Actor, "the app's own decision")
	require.Equal(t, "d-1", first.Delivery)
	require.Equal(t, "999000", first.Previous)
	require.Equal(t, "o/cp/dev@aaa111", first.Subject)
	require.Zero(t, page.Next)

	rec = get(t, api, "reader", "controlPlane=o/cp&environment=stage&kind=refusal,approval&actor=ALICE")
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	require.Len(t, page.Entries, 1)
	require.Equal(t, "approval 1 of 2", page.Entries[0].Reason)

	rec = get(t, api, "reader", "controlPlane=o/cp&limit=2")
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	require.Len(t, page.Entries, 2)
	require.Equal(t, page.Entries[1].Seq, page.Next, "the next page starts after it")
	rec = get(t, api, "reader", "controlPlane=o/cp&after="+url.QueryEscape(strings.TrimSpace(jsonInt(page.Next))))
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	require.Len(t, page.Entries, 1)

	rec = get(t, api, "reader", "controlPlane=o/cp&format=jsonl&since=2026-03-29T08:02:00Z")
	require.Equal(t, "application/x-ndjson", rec.Header().Get("Content-Type"))
	var lines []Entry
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		var e Entry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		lines = append(lines, e)
	}
	require.Len(t, lines, 2, "every entry from since on, one per line")
	require.Equal(t, "bob", lines[1].Actor)
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestToken(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	require.Empty(t, Token(r))
	r.Header.Set("Authorization", "token abc")
	require.Equal(t, "abc", Token(r))
	r.Header.Set("Authorization", "Bearer xyz ")
	require.Equal(t, "xyz", Token(r))
}
