package e2e

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // to edit the app's store as an attacker would

	"github.com/kalypso-gitops/kalypso/internal/audit"
	"github.com/kalypso-gitops/kalypso/internal/sample"
)

// auditEntries exports the audit trail of the sample's control plane as JSON lines, asked with
// user's GitHub token.
func (w *world) auditEntries(user, query string) []audit.Entry {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+w.addr+"/api/v1/audit?format=jsonl&controlPlane="+sample.Owner+"/"+sample.ControlPlane+query, nil)
	require.NoError(w.t, err)
	req.Header.Set("Authorization", "Bearer "+w.sim.UserToken(user))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	require.Equal(w.t, http.StatusOK, resp.StatusCode)
	var out []audit.Entry
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e audit.Entry
		require.NoError(w.t, json.Unmarshal(sc.Bytes(), &e))
		out = append(out, e)
	}
	return out
}

// auditLines are the entries as "kind actor environment short-commit", to compare.
func auditLines(entries []audit.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%s %s %s %.7s", e.Kind, e.Actor, e.Environment, e.Commit))
	}
	return out
}

// auditVerify runs `kalypso audit verify --store FILE`.
func auditVerify(t *testing.T, file string) (string, error) {
	out, err := exec.Command(binary, "audit", "verify", "--store", file).CombinedOutput()
	return string(out), err
}

// editAudit changes the body of one audit entry in the store file, as someone with access to
// the database could.
func editAudit(t *testing.T, file string, seq int64, from, to string) {
	db, err := sql.Open("sqlite", file)
	require.NoError(t, err)
	defer db.Close()
	res, err := db.Exec(`UPDATE audit SET body = replace(body, ?, ?) WHERE seq = ?`, from, to, seq)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

func TestE2EAuditAPIRefusesWithoutAToken(t *testing.T) {
	w := newWorld(t)
	w.start()
	resp, err := http.Get("http://" + w.addr + "/api/v1/audit?controlPlane=" + sample.Owner + "/" + sample.ControlPlane)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodGet, "http://"+w.addr+"/api/v1/audit?controlPlane="+sample.Owner+"/"+sample.ControlPlane, nil)
	req.Header.Set("Authorization", "Bearer "+w.sim.UserToken("stranger"))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body.String())
	require.True(t, strings.Contains(body.String(), "read permission"))
}
