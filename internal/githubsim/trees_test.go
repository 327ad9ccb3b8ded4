package githubsim

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"
)

func TestCreateTree(t *testing.T) {
	f := newFixture(t)
	base, _, err := f.client.Git.GetCommit(ctx(), testOwner, testRepo, f.seed)
	require.NoError(t, err)
	baseTree := base.GetTree().GetSHA()
	blob, _, err := f.client.Git.CreateBlob(ctx(), testOwner, testRepo, &github.Blob{Content: ptr("a: 1\n"), Encoding: ptr("utf-8")})
	require.NoError(t, err)
	entry := func(path string, sha, content *string) *github.TreeEntry {
		return &github.TreeEntry{Path: &path, Mode: ptr("100644"), Type: ptr("blob"), SHA: sha, Content: content}
	}
	tests := []struct {
		name    string
		base    string
		entries []*github.TreeEntry
		want    map[string]string
		status  int
	}{
		{
			name: "nested paths, inline content and deletion", base: baseTree,
			entries: []*github.TreeEntry{
				entry("clusters/stage/deep/app.yaml", blob.SHA, nil),
				entry("clusters/dev/app.yaml", nil, ptr("replicas: 9\n")),
				entry("clusters/prod/values.yaml", nil, nil),
			},
			want: map[string]string{
				"README.md": "# gitops\n", "clusters/dev/app.yaml": "replicas: 9\n",
				"clusters/prod/app.yaml": "replicas: 3\n", "clusters/stage/deep/app.yaml": "a: 1\n",
			},
		},
		{
			name: "deleting the last file removes the directory", base: baseTree,
			entries: []*github.TreeEntry{entry("clusters/dev/app.yaml", nil, nil)},
			want: map[string]string{
				"README.md": "# gitops\n", "clusters/prod/app.yaml": "replicas: 3\n", "clusters/prod/values.yaml": "env: prod\n",
			},
		},
		{
			name: "without base_tree only the entries remain", entries: []*github.TreeEntry{entry("only.txt", nil, ptr("x"))},
			want: map[string]string{"only.txt": "x"},
		},
		{name: "deleting a missing path", base: baseTree, entries: []*github.TreeEntry{entry("nope.yaml", nil, nil)}, status: http.StatusUnprocessableEntity},
		{name: "sha and content", base: baseTree, entries: []*github.TreeEntry{entry("x.yaml", blob.SHA, ptr("x"))}, status: http.StatusUnprocessableEntity},
		{name: "unknown blob", base: baseTree, entries: []*github.TreeEntry{entry("x.yaml", ptr("1111111111111111111111111111111111111111"), nil)}, status: http.StatusUnprocessableEntity},
		{name: "bad mode", base: baseTree, entries: []*github.TreeEntry{{Path: ptr("x"), Mode: ptr("100600"), Type: ptr("blob"), Content: ptr("x")}}, status: http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, resp, err := f.client.Git.CreateTree(ctx(), testOwner, testRepo, tt.base, tt.entries)
			if tt.status != 0 {
				require.Error(t, err)
				require.Equal(t, tt.status, resp.StatusCode)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, treeFiles(t, f, tree.GetSHA()))
		})
	}
}

// treeFiles reads a tree recursively through the API into path → content.
func treeFiles(t *testing.T, f *fixture, sha string) map[string]string {
	t.Helper()
	tree, _, err := f.client.Git.GetTree(ctx(), testOwner, testRepo, sha, true)
	require.NoError(t, err)
	require.False(t, tree.GetTruncated())
	out := map[string]string{}
	for _, e := range tree.Entries {
		if e.GetType() != "blob" {
			continue
		}
		data, _, err := f.client.Git.GetBlobRaw(ctx(), testOwner, testRepo, e.GetSHA())
		require.NoError(t, err)
		out[e.GetPath()] = string(data)
	}
	return out
}

func TestCommitAndContentsFlow(t *testing.T) {
	f := newFixture(t)
	tree, _, err := f.client.Git.CreateTree(ctx(), testOwner, testRepo, f.seed, []*github.TreeEntry{
		{Path: ptr("clusters/dev/app.yaml"), Mode: ptr("100644"), Type: ptr("blob"), Content: ptr("replicas: 4\n")},
	})
	require.NoError(t, err, "a commit SHA is accepted as base_tree")
	commit, _, err := f.client.Git.CreateCommit(ctx(), testOwner, testRepo, &github.Commit{
		Message: ptr("promote dev"), Tree: tree, Parents: []*github.Commit{{SHA: &f.seed}},
		Author: &github.CommitAuthor{Name: ptr("Kalypso"), Email: ptr("kalypso@example.test")},
	}, nil)
	require.NoError(t, err)
	require.Equal(t, "Kalypso", commit.GetAuthor().GetName())
	_, _, err = f.client.Git.UpdateRef(ctx(), testOwner, testRepo, &github.Reference{Ref: ptr("heads/main"), Object: &github.GitObject{SHA: commit.SHA}}, false)
	require.NoError(t, err)
	got, err := f.sim.ReadFile(testOwner, testRepo, "main", "clusters/dev/app.yaml")
	require.NoError(t, err)
	require.Equal(t, "replicas: 4\n", got)

	rc, _, err := f.client.Repositories.GetCommit(ctx(), testOwner, testRepo, commit.GetSHA(), nil)
	require.NoError(t, err)
	require.Len(t, rc.Files, 1)
	require.Equal(t, "modified", rc.Files[0].GetStatus())
	require.Equal(t, 1, rc.Files[0].GetAdditions())
	require.Contains(t, rc.Files[0].GetPatch(), "+replicas: 4")

	list, _, err := f.client.Repositories.ListCommits(ctx(), testOwner, testRepo, &github.CommitsListOptions{Path: "clusters/prod"})
	require.NoError(t, err)
	require.Len(t, list, 1, "only the seed commit touches clusters/prod")

	file, _, _, err := f.client.Repositories.GetContents(ctx(), testOwner, testRepo, "clusters/dev/app.yaml", &github.RepositoryContentGetOptions{Ref: f.seed})
	require.NoError(t, err)
	text, err := file.GetContent()
	require.NoError(t, err)
	require.Equal(t, "replicas: 1\n", text)
	rd, _, err := f.client.Repositories.DownloadContents(ctx(), testOwner, testRepo, "clusters/dev/app.yaml", nil)
	require.NoError(t, err)
	defer rd.Close()

	_, resp, err := f.client.Repositories.UpdateFile(ctx(), testOwner, testRepo, "clusters/dev/app.yaml", &github.RepositoryContentFileOptions{
		Message: ptr("stale"), Content: []byte("x"), SHA: file.SHA,
	})
	require.Error(t, err)
	require.Equal(t, http.StatusConflict, resp.StatusCode, "the file changed since that SHA")
}
