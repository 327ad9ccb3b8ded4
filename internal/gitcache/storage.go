package gitcache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// The cache counts the bytes of each repository as objects come in, rather than measuring the
// repository after every fetch or push: a repository's storage is wrapped so that every
// object written (by a fetch, or by the app) and every pack written (by a fetch into a
// repository on disk) adds its size. An object written again adds nothing.

// sized is a repository's storage that knows how many bytes it holds.
type sized interface{ bytes() int64 }

// memoryStorage is an in-memory repository's storage, counting the objects written.
type memoryStorage struct {
	*memory.Storage
	n *atomic.Int64
}

// SetEncodedObject stores an object and counts it, once.
func (s memoryStorage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	return setCounted(s.Storage, s.n, o)
}

func (s memoryStorage) bytes() int64 { return s.n.Load() }

// diskStorage is an on-disk repository's storage, counting the loose objects and packs
// written (loose objects by their size, packs by their bytes).
type diskStorage struct {
	*filesystem.Storage
	n *atomic.Int64
}

// SetEncodedObject stores an object and counts it, once.
func (s diskStorage) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	return setCounted(s.Storage, s.n, o)
}

// setCounted stores an object in s and adds its size to n unless s already has it.
func setCounted(s storer.EncodedObjectStorer, n *atomic.Int64, o plumbing.EncodedObject) (plumbing.Hash, error) {
	if s.HasEncodedObject(o.Hash()) != nil {
		n.Add(o.Size())
	}
	return s.SetEncodedObject(o)
}

// PackfileWriter returns a writer of a pack that counts what is written through it.
func (s diskStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return countingWriter{WriteCloser: w, n: s.n}, nil
}

func (s diskStorage) bytes() int64 { return s.n.Load() }

type countingWriter struct {
	io.WriteCloser
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// newMemoryRepository creates an empty in-memory repository whose remote origin is url.
func newMemoryRepository(url string) (*git.Repository, error) {
	repo, err := git.Init(memoryStorage{Storage: memory.NewStorage(), n: &atomic.Int64{}}, nil)
	if err != nil {
		return nil, err
	}
	_, err = repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{url}})
	return repo, err
}

// openDiskRepository opens the bare repository at path, creating it (with remote origin url)
// when it does not exist. An existing one is measured once, by the size of its files.
func openDiskRepository(path, url string) (*git.Repository, error) {
	n := &atomic.Int64{}
	st := diskStorage{Storage: filesystem.NewStorage(osfs.New(path), cache.NewObjectLRUDefault()), n: n}
	if _, err := os.Stat(path); err == nil {
		repo, err := git.Open(st, nil)
		if err == nil {
			n.Store(diskSize(path))
			return repo, nil
		}
		if !errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, err
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	repo, err := git.Init(st, nil)
	if err != nil {
		return nil, err
	}
	if _, err := repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		return nil, fmt.Errorf("remote origin: %w", err)
	}
	return repo, nil
}

// diskSize is the size of the files below path.
func diskSize(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// repositoryBytes is what a repository of the cache holds, as counted.
func repositoryBytes(repo *git.Repository) int64 {
	if s, ok := repo.Storer.(sized); ok {
		return s.bytes()
	}
	return 0
}
