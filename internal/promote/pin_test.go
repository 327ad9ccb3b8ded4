package promote

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/reconcile"
)

func TestPinText(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	cases := map[string]struct{ in, want string }{
		"replaces the commit": {
			"kind: BaseRepo\nmetadata:\n  name: main\nspec:\n  repo: r\n  branch: main\n  path: .\n  commit: 5523a85f37d12c0c7c10ab6616644db089fcd6f7\n",
			"kind: BaseRepo\nmetadata:\n  name: main\nspec:\n  repo: r\n  branch: main\n  path: .\n  commit: " + sha + "\n"},
		"adds it after path, with the same indent": {
			"spec:\n    repo: r\n    branch: main\n    path: .\n# end\n",
			"spec:\n    repo: r\n    branch: main\n    path: .\n    commit: " + sha + "\n# end\n"},
		"keeps what follows": {
			"spec:\n  commit: abc # pinned\n  path: .\n",
			"spec:\n  commit: " + sha + "\n  path: .\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { require.Equal(t, tc.want, pinText(tc.in, sha)) })
	}
}

func TestApprovalID(t *testing.T) {
	id := approvalID(repo("o", "cp"), "stage", "abc")
	cp, env, sha, ok := parseApprovalID(id)
	require.True(t, ok)
	require.Equal(t, "o/cp", cp.String())
	require.Equal(t, "stage", env)
	require.Equal(t, "abc", sha)
	_, _, _, ok = parseApprovalID("kalypso:o/cp:dev")
	require.False(t, ok)
}

func repo(owner, name string) reconcile.Repo { return reconcile.Repo{Owner: owner, Name: name} }
