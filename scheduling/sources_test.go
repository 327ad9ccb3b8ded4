package scheduling

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// unreadable is a file system whose files can be listed and measured but never read: loading
// decides from sizes before it reads.
type unreadable struct{ fstest.MapFS }

func (u unreadable) Open(name string) (fs.File, error) {
	if info, err := u.MapFS.Stat(name); err == nil && !info.IsDir() && !strings.HasSuffix(name, ".sourceignore") {
		return nil, errors.New("read " + name + ": reading is not allowed here")
	}
	return u.MapFS.Open(name)
}

func (u unreadable) ReadFile(name string) ([]byte, error) {
	if strings.HasSuffix(name, ".sourceignore") {
		return u.MapFS.ReadFile(name)
	}
	return nil, errors.New("read " + name + ": reading is not allowed here")
}

func (u unreadable) Stat(name string) (fs.FileInfo, error) { return u.MapFS.Stat(name) }

// The limits of a source count every YAML file loading would read, each path counted even when
// several hold the same content, and leave out what .sourceignore ignores and other files.
func TestSelectFilesCountsWhatWouldBeRead(t *testing.T) {
	blob := strings.Repeat("x", 1000)
	fsys := fstest.MapFS{
		".sourceignore":  {Data: []byte("ignored/\n")},
		"ignored/a.yaml": {Data: []byte(blob)},
		"notes.md":       {Data: []byte(blob)},
	}
	for _, p := range []string{"a.yaml", "b/a.yaml", "c/d/a.yml"} {
		fsys[p] = &fstest.MapFile{Data: []byte(blob)}
	}
	files, err := SelectFiles(fsys, "", Policy{MaxSourceBytes: 3000, MaxSourceFiles: 3})
	require.NoError(t, err)
	require.Equal(t, []SourceFile{{"a.yaml", 1000}, {"b/a.yaml", 1000}, {"c/d/a.yml", 1000}}, files)

	_, err = SelectFiles(fsys, "", Policy{MaxSourceBytes: 2999})
	require.ErrorIs(t, err, ErrSourceTooLarge)
	require.EqualError(t, err, "the source's YAML files (3 files, 3000 bytes, a file at several paths counted at each) are over the limit of 2999 bytes (setting sources.maxSourceBytes): none of them is read")
	_, err = SelectFiles(fsys, "", Policy{MaxSourceFiles: 2})
	require.EqualError(t, err, "the source's YAML files (3 files, 3000 bytes, a file at several paths counted at each) are over the limit of 2 files (setting sources.maxSourceFiles): none of them is read")
	files, err = SelectFiles(fsys, "b", Policy{MaxSourceBytes: 1000})
	require.NoError(t, err, "only the folder read counts")
	require.Len(t, files, 1)
	fsys["huge.yaml"] = &fstest.MapFile{Data: []byte(strings.Repeat("x", 5000))}
	files, err = SelectFiles(fsys, "", Policy{MaxSourceBytes: 3000, MaxFileBytes: 4000})
	require.NoError(t, err, "a file above the file limit is never read: it does not count")
	require.Len(t, files, 4, "it is listed, to be reported")
}

// A source over its limits is one error on it, and none of its files is read: the decision is
// made from sizes. Other sources are read as usual.
func TestSourceOverItsLimitIsOneErrorAndNothingRead(t *testing.T) {
	in := tenancyInputs(map[string]string{"w.yaml": workload("api", "dev", "./api")}, map[string]string{"w.yaml": workload("web", "dev", "./web")})
	huge := fstest.MapFS{}
	copyOf := []byte(workload("api", "dev", "./api") + "# " + strings.Repeat("x", 40_000) + "\n")
	for i := range 100 {
		huge[sprintf("deploy/copy-%03d.yaml", i)] = &fstest.MapFile{Data: copyOf}
	}
	in.Workloads = splitWorkloads{"https://github.com/org/app-a": unreadable{huge}, "https://github.com/org/app-b": in.Workloads}
	in.Policy.MaxSourceBytes = 1 << 20
	snap := Load(in)
	var sourceErrs []string
	for _, e := range snap.Errors {
		if strings.Contains(e.Error(), "sources.maxSourceBytes") {
			sourceErrs = append(sourceErrs, e.Error())
		}
		require.NotContains(t, e.Error(), "reading is not allowed", "no file of the source is read")
	}
	require.Equal(t, []string{sprintf("wl-a:deploy: the source's YAML files (100 files, %d bytes, a file at several paths counted at each) are over the limit of 1048576 bytes (setting sources.maxSourceBytes): none of them is read", 100*len(copyOf))}, sourceErrs)
	require.Equal(t, []string{"web-dev@team-b"}, targetNames(snap), "the other team's source is read")
	require.True(t, snap.Incomplete, "the source's objects are unknown: nothing is removed")
}

// splitWorkloads serves each registered repository from its own source.
type splitWorkloads map[string]any

func (s splitWorkloads) Workload(spec ManifestsSpec) (Source, error) {
	switch w := s[spec.Repo].(type) {
	case WorkloadSource:
		return w.Workload(spec)
	case fs.FS:
		return Source{FS: w, Prefix: "wl-a:"}, nil
	}
	return Source{}, errors.New("unknown repository")
}

// Loading stops at its time budget: the files not read are one error naming the setting, and
// the snapshot is incomplete. A source's files are all read before they are parsed: a budget
// that ends while they are read stops the parse at the first file; one that ends before a
// file is read stops there.
func TestLoadingStopsAtItsTimeBudget(t *testing.T) {
	fsys := fstest.MapFS{"a.yaml": {Data: []byte(brokenDocuments(4))}, "b.yaml": {Data: []byte(brokenDocuments(4))},
		"c.yaml": {Data: []byte(brokenDocuments(4))}}
	for _, tc := range []struct{ at, stopped, msg string }{
		{"b.yaml", "env:a.yaml", "the rest of this file and the 2 files after it are not read"},
		{"c.yaml", "env:a.yaml", "the rest of this file and the 2 files after it are not read"},
	} {
		var errs Errors
		l := newLoader(Policy{}, &errs)
		var objs objects
		expire := expiringFS{MapFS: fsys, l: l, at: tc.at}
		require.False(t, l.source(Source{FS: expire, Prefix: "env:"}, "", &objs))
		l.stop()
		require.Empty(t, objs.clusterTypes, "no file is parsed after the budget ended")
		var timeouts []*Error
		for _, e := range errs {
			if strings.Contains(e.Msg, "sources.loadTimeout") {
				timeouts = append(timeouts, e)
			}
		}
		require.Len(t, timeouts, 1, "one error for the files not read")
		require.Equal(t, tc.stopped, timeouts[0].Pos.File)
		require.Equal(t, "loading the environment's sources took longer than the limit of 30s (setting sources.loadTimeout); "+tc.msg, timeouts[0].Msg)
	}
	var errs Errors
	l := newLoader(Policy{}, &errs)
	defer l.stop()
	l.expired.Store(true)
	require.False(t, l.source(Source{FS: fsys, Prefix: "env:"}, "", &objects{}))
	require.Len(t, errs, 1)
	require.Equal(t, "env:a.yaml", errs[0].Pos.File)
	require.Contains(t, errs[0].Msg, "(setting sources.loadTimeout); this file and the 2 after it are not read")
}

// expiringFS ends the loader's time budget when a file is read.
type expiringFS struct {
	fstest.MapFS
	l  *loader
	at string
}

func (e expiringFS) ReadFile(name string) ([]byte, error) {
	if name == e.at {
		e.l.expired.Store(true)
	}
	return e.MapFS.ReadFile(name)
}

// Looking for the BaseRepo parses only the files that may hold one, however it is written.
func TestFindBaseRepoParsesOnlyFilesThatMayHoldOne(t *testing.T) {
	env := fstest.MapFS{
		"bomb.yaml": {Data: []byte(brokenDocuments(50))},
		"base.yaml": {Data: []byte("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: \"Base\\x52epo\"\nmetadata: {name: main}\nspec: {repo: r, branch: main, path: ., commit: abc}\n")},
	}
	file, commit, ok := FindBaseRepo(Source{FS: env, Prefix: "dev:"})
	require.True(t, ok)
	require.Equal(t, "dev:base.yaml", file)
	require.Equal(t, "abc", commit)
	require.False(t, mayHold(KindBaseRepo)(env["bomb.yaml"].Data), "the file of broken ConfigMaps is not parsed")
}
