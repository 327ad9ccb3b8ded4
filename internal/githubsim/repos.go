package githubsim

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-github/v62/github"
)

// repo is one simulated repository: a bare git repository plus the GitHub
// objects attached to it. mu guards all of it, including the git storage.
type repo struct {
	mu sync.Mutex

	id            int64
	owner, name   string
	defaultBranch string
	installID     int64
	dir           string
	git           *git.Repository
	createdAt     time.Time
	pushedAt      time.Time

	pulls       []*pullRequest
	nextNumber  int
	checkRuns   []*checkRun
	suites      map[string]int64
	statuses    []*commitStatus
	deployments []*deployment
	labels      map[string]*github.Label
	comments    []*issueComment
	perms       map[string]string
	diffs       *capped[[2]plumbing.Hash, []fileDiff] // small tree diffs already computed (trees never change)
	lastDiffs   *capped[plumbing.Hash, lastDiff]      // the newest large diff from each tree
	patches     *capped[[2]plumbing.Hash, fileDiff]   // file patches by (from, to) blob, likewise
}

func (rp *repo) fullName() string { return rp.owner + "/" + rp.name }

// CreateRepo creates an empty bare repository owned by an installation's
// account; seed it with CommitFiles or a git push.
func (s *Server) CreateRepo(installationID int64, owner, name, defaultBranch string) error {
	if defaultBranch == "" {
		defaultBranch = "main"
	}
	s.mu.Lock()
	_, instOK := s.installs[installationID]
	_, exists := s.repos[repoKey(owner, name)]
	s.mu.Unlock()
	if !instOK {
		return fmt.Errorf("githubsim: no installation %d", installationID)
	}
	if exists {
		return fmt.Errorf("githubsim: repository %s/%s already exists", owner, name)
	}
	dir := filepath.Join(s.opts.Dir, owner, name+".git")
	g, err := initBare(dir, defaultBranch)
	if err != nil {
		return err
	}
	now := s.now()
	rp := &repo{
		id: s.nextID(), owner: owner, name: name, defaultBranch: defaultBranch,
		installID: installationID, dir: dir, git: g, createdAt: now, pushedAt: now,
		nextNumber: 1, suites: map[string]int64{}, labels: map[string]*github.Label{},
		perms: map[string]string{},
	}
	rp.initDiffCaches()
	s.mu.Lock()
	s.repos[repoKey(owner, name)] = rp
	s.mu.Unlock()
	return nil
}

func initBare(dir, defaultBranch string) (*git.Repository, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("githubsim: create repo dir: %w", err)
	}
	g, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare:        true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(defaultBranch)},
	})
	if err != nil {
		return nil, fmt.Errorf("githubsim: init %s: %w", dir, err)
	}
	cfg, err := g.Config()
	if err != nil {
		return nil, fmt.Errorf("githubsim: read config: %w", err)
	}
	cfg.Raw.Section("receive").SetOption("autogc", "false")
	cfg.Raw.Section("gc").SetOption("auto", "0")
	if err := g.SetConfig(cfg); err != nil {
		return nil, fmt.Errorf("githubsim: write config: %w", err)
	}
	return openStore(dir)
}

func repoKey(owner, name string) string {
	return strings.ToLower(owner) + "/" + strings.ToLower(strings.TrimSuffix(name, ".git"))
}

func (s *Server) lookupRepo(owner, name string) *repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[repoKey(owner, name)]
}

func (s *Server) mustRepo(owner, name string) (*repo, error) {
	rp := s.lookupRepo(owner, name)
	if rp == nil {
		return nil, fmt.Errorf("githubsim: no repository %s/%s", owner, name)
	}
	return rp, nil
}

// reposOf lists an installation's repositories in creation order.
func (s *Server) reposOf(inst int64) []*repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*repo
	for _, rp := range s.repos {
		if rp.installID == inst {
			out = append(out, rp)
		}
	}
	sortBy(out, func(r *repo) int64 { return r.id })
	return out
}

// repository builds the go-github repository object; the caller holds rp.mu
// or accepts a racy pushed_at.
func (s *Server) repository(rp *repo) *github.Repository {
	api := s.base() + "/api/v3/repos/" + rp.fullName()
	html := s.base() + "/" + rp.fullName()
	r := &github.Repository{
		ID: ptr(rp.id), NodeID: ptr(nodeID("Repository", rp.id)), Name: ptr(rp.name),
		FullName: ptr(rp.fullName()), Owner: s.user(rp.owner), Private: ptr(true),
		HTMLURL: ptr(html), Fork: ptr(false), URL: ptr(api),
		CloneURL: ptr(html + ".git"), GitURL: ptr("git://" + hostOf(s.base()) + "/" + rp.fullName() + ".git"),
		SSHURL: ptr("git@" + hostOf(s.base()) + ":" + rp.fullName() + ".git"), SVNURL: ptr(html),
		DefaultBranch: ptr(rp.defaultBranch), Visibility: ptr("private"),
		CreatedAt: ts(rp.createdAt), UpdatedAt: ts(rp.pushedAt), PushedAt: ts(rp.pushedAt),
		ForksCount: ptr(0), StargazersCount: ptr(0), WatchersCount: ptr(0), Watchers: ptr(0),
		Size: ptr(0), OpenIssuesCount: ptr(0), OpenIssues: ptr(0),
		NetworkCount: ptr(0), SubscribersCount: ptr(0),
		HasIssues: ptr(true), HasProjects: ptr(false), HasWiki: ptr(false), HasPages: ptr(false),
		HasDownloads: ptr(false), HasDiscussions: ptr(false), Archived: ptr(false), Disabled: ptr(false),
		IsTemplate: ptr(false), AllowMergeCommit: ptr(true), AllowSquashMerge: ptr(true),
		AllowRebaseMerge: ptr(true), DeleteBranchOnMerge: ptr(false), Topics: []string{},
		WebCommitSignoffRequired: ptr(false),
	}
	setRepoURLs(r, api)
	return r
}

func setRepoURLs(r *github.Repository, api string) {
	set := func(p **string, suffix string) { *p = ptr(api + suffix) }
	set(&r.ForksURL, "/forks")
	set(&r.KeysURL, "/keys{/key_id}")
	set(&r.CollaboratorsURL, "/collaborators{/collaborator}")
	set(&r.TeamsURL, "/teams")
	set(&r.HooksURL, "/hooks")
	set(&r.IssueEventsURL, "/issues/events{/number}")
	set(&r.EventsURL, "/events")
	set(&r.AssigneesURL, "/assignees{/user}")
	set(&r.BranchesURL, "/branches{/branch}")
	set(&r.TagsURL, "/tags")
	set(&r.BlobsURL, "/git/blobs{/sha}")
	set(&r.GitTagsURL, "/git/tags{/sha}")
	set(&r.GitRefsURL, "/git/refs{/sha}")
	set(&r.TreesURL, "/git/trees{/sha}")
	set(&r.StatusesURL, "/statuses/{sha}")
	set(&r.LanguagesURL, "/languages")
	set(&r.StargazersURL, "/stargazers")
	set(&r.ContributorsURL, "/contributors")
	set(&r.SubscribersURL, "/subscribers")
	set(&r.SubscriptionURL, "/subscription")
	set(&r.CommitsURL, "/commits{/sha}")
	set(&r.GitCommitsURL, "/git/commits{/sha}")
	set(&r.CommentsURL, "/comments{/number}")
	set(&r.IssueCommentURL, "/issues/comments{/number}")
	set(&r.ContentsURL, "/contents/{+path}")
	set(&r.CompareURL, "/compare/{base}...{head}")
	set(&r.MergesURL, "/merges")
	set(&r.ArchiveURL, "/{archive_format}{/ref}")
	set(&r.DownloadsURL, "/downloads")
	set(&r.IssuesURL, "/issues{/number}")
	set(&r.PullsURL, "/pulls{/number}")
	set(&r.MilestonesURL, "/milestones{/number}")
	set(&r.NotificationsURL, "/notifications{?since,all,participating}")
	set(&r.LabelsURL, "/labels{/name}")
	set(&r.ReleasesURL, "/releases{/id}")
	set(&r.DeploymentsURL, "/deployments")
}

// repoMap is the JSON object of a repository, with GitHub's null fields.
func (s *Server) repoMap(rp *repo) map[string]any {
	m := toMap(s.repository(rp))
	m["forks"] = 0
	return withNulls(m, "description", "homepage", "language", "mirror_url", "license")
}

func hostOf(base string) string {
	if i := strings.Index(base, "://"); i >= 0 {
		return base[i+3:]
	}
	return base
}

func (s *Server) getRepo(c *call) (int, any, error) {
	c.repo.mu.Lock()
	defer c.repo.mu.Unlock()
	m := s.repoMap(c.repo)
	m["permissions"] = map[string]bool{"admin": false, "maintain": false, "push": true, "triage": true, "pull": true}
	if c.user != "" {
		m["permissions"] = userPermissions(roleOrNone(c.repo.perms[strings.ToLower(c.user)]))
	}
	return http.StatusOK, m, nil
}
