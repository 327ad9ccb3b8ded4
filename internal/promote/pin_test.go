package promote

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/internal/envref"
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
	l := Locator{Installation: 1, ControlPlane: envref.Repo{Owner: "o", Name: "cp"}, Env: "stage", Commit: "abc"}
	got, ok := parseApprovalID(approvalID(l))
	require.True(t, ok)
	l.Installation = 0 // not in the identifier: the event says it
	require.Equal(t, l, got)
	_, ok = parseApprovalID("kalypso:o/cp:dev")
	require.False(t, ok)
}
