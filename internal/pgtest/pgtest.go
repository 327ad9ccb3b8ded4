// Package pgtest starts a throwaway PostgreSQL server from Debian's postgresql package for
// tests: initdb into a temporary folder, the server on a random port of 127.0.0.1 with its
// Unix socket in that folder, as the unprivileged user postgres when the tests run as root.
// In CI (the CI variable set) a missing PostgreSQL fails the test; elsewhere the test is
// skipped with a message saying how to run it.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/freeport"

	// The pgx driver, registered with database/sql as "pgx".
	_ "github.com/jackc/pgx/v5/stdlib"
)

// Install says how to get PostgreSQL when it is missing.
const Install = "install Debian's PostgreSQL (apt-get install postgresql) and run the tests again; .ci/run does it"

// Server is a running PostgreSQL server owned by a test.
type Server struct {
	dir  string
	port int
	cmd  *exec.Cmd
	n    atomic.Int64
}

// Bin returns the folder of PostgreSQL's programs, or "" when none is installed.
func Bin() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(matches[len(matches)-1])
}

// Start starts a server for t and stops it when t ends. Without PostgreSQL it fails t in CI
// and skips it elsewhere.
func Start(t testing.TB) *Server {
	t.Helper()
	s := startOrSkip(t)
	t.Cleanup(s.Stop)
	return s
}

// shared is the server of Shared, stopped by StopShared.
var shared struct {
	sync.Mutex
	srv *Server
}

// Shared returns the test process's server, started on first use; StopShared (or Run in
// TestMain) stops it. Each test gets a database of its own with NewDatabase.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil {
		shared.srv = startOrSkip(t)
	}
	return shared.srv
}

// StopShared stops the server of Shared, if one was started.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
		shared.srv = nil
	}
}

// Run runs the tests of a package and then stops the shared server: call it from TestMain.
func Run(m *testing.M) int {
	defer StopShared()
	return m.Run()
}

// startOrSkip starts a server, or skips (fails in CI) t when PostgreSQL is missing.
func startOrSkip(t testing.TB) *Server {
	t.Helper()
	bin := Bin()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is required in CI and not installed: %s", Install)
		}
		t.Skipf("PostgreSQL tests skipped: no /usr/lib/postgresql/*/bin/postgres; %s", Install)
	}
	s, err := start(bin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s
}

// start runs initdb and the server in a new temporary folder.
func start(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "kalypso-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	if err := s.boot(bin); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		s.Stop()
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return s, nil
}

// boot initialises the data folder and starts the server on a free port.
func (s *Server) boot(bin string) error {
	cred, err := runAs(s.dir)
	if err != nil {
		return err
	}
	data := filepath.Join(s.dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "kalypso", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if s.port, err = freeport.Port(); err != nil {
		return err
	}
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", s.dir, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	logs, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return err
	}
	s.cmd.Stdout, s.cmd.Stderr = logs, logs
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	return s.waitReady(30 * time.Second)
}

// runAs returns the credentials of user postgres, owning dir, when running as root; nil
// (the current user) otherwise.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the user postgres (Debian's package creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// waitReady polls until the server accepts connections or the time is up.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		db, err := sql.Open("pgx", s.url("postgres"))
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %s: %w", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop shuts the server down fast (SIGINT), waits for it and removes its folder.
func (s *Server) Stop() {
	defer os.RemoveAll(s.dir)
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// URL is the connection string of database db on the server's TCP port.
func (s *Server) url(db string) string {
	return fmt.Sprintf("postgres://kalypso@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates an empty database and returns its connection string.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "t" + strconv.FormatInt(s.n.Add(1), 10) + "_" + strings.ToLower(strconv.FormatInt(time.Now().UnixNano(), 36))
	db, err := sql.Open("pgx", s.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return s.url(name)
}
