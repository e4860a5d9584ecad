// Package pgtest starts a throw-away PostgreSQL cluster for tests: initdb and
// pg_ctl from /usr/lib/postgresql/15/bin (or $SHIRUBE_PG_BIN) in a temporary
// directory, listening on a free loopback port, run as the postgres user
// when the tests run as root. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and in a test:
//
//	dsn := pgtest.NewDatabase(t) // a fresh, empty database
//
// When the cluster cannot be started, tests that need it skip with the
// reason — except under CI=true, where they fail: CI must run them.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables Main sets for the tests of its package.
const (
	envDSN   = "SHIRUBE_PGTEST_DSN"   // admin DSN of the running cluster
	envError = "SHIRUBE_PGTEST_ERROR" // why the cluster could not start
)

// Main starts the cluster, runs the tests and stops the cluster. It returns
// the exit code for os.Exit. SHIRUBE_TEST_DSN, when set, names an existing
// server to use instead (its user must be allowed to create databases).
func Main(m *testing.M) int {
	if dsn := os.Getenv("SHIRUBE_TEST_DSN"); dsn != "" {
		os.Setenv(envDSN, dsn)
		return m.Run()
	}
	c, err := Start(context.Background())
	if err != nil {
		os.Setenv(envError, err.Error())
		return m.Run()
	}
	os.Setenv(envDSN, c.DSN("postgres"))
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
	}
	return code
}

// Cluster is a running throw-away cluster.
type Cluster struct {
	Dir  string // temporary directory holding data, socket and log
	Port int
	bin  string
	user string // "" when running as the current user
}

// Bin is the directory of the PostgreSQL 15 programs.
func Bin() string {
	if b := os.Getenv("SHIRUBE_PG_BIN"); b != "" {
		return b
	}
	return "/usr/lib/postgresql/15/bin"
}

// Start creates and starts a cluster. The data directory is tuned for
// throw-away use (fsync off): never point it at data you want to keep.
func Start(ctx context.Context) (*Cluster, error) {
	c := &Cluster{bin: Bin()}
	if _, err := os.Stat(filepath.Join(c.bin, "initdb")); err != nil {
		return nil, fmt.Errorf("PostgreSQL 15 is not installed (%s/initdb missing): apt-get install postgresql-15", c.bin)
	}
	dir, err := os.MkdirTemp("", "shirube-pg-")
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	if os.Geteuid() == 0 {
		// initdb refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root needs the postgres user to start a cluster: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		c.user = "postgres"
	}
	if c.Port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(ctx, "initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := c.Resume(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// Resume starts the cluster's server again after Halt, on the same port.
func (c *Cluster) Resume(ctx context.Context) error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=256MB", c.Port, c.Dir)
	if out, err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-o", opts, "-l", filepath.Join(c.Dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, out, log)
	}
	return nil
}

// Halt stops the cluster's server (fast shutdown: sessions are cut off;
// committed data is kept even with the throw-away settings) and keeps its
// data for Resume.
func (c *Cluster) Halt(ctx context.Context) error {
	if out, err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// StartCluster starts a cluster of the test's own (for tests that stop
// and restart the server) and stops it when the test ends. When it cannot
// be started the test is skipped with the reason, or fails when CI=true.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx)
	if err != nil {
		unavailable(tb, err.Error())
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Log(err)
		}
	})
	return c
}

// run runs one PostgreSQL program, as the postgres user when needed.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if c.user != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.user, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = c.Dir
	return cmd.CombinedOutput()
}

// DSN returns the connection string of database db.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// Stop stops the cluster (fast shutdown) and removes its directory.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "fast", "-w", "stop")
	os.RemoveAll(c.Dir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// seq numbers the databases of one test process.
var seq atomic.Int64

// NewDatabase creates a fresh database on the cluster Main started and
// returns its DSN; it is dropped when the test ends. Without a cluster the
// test is skipped with the reason, or fails when CI=true.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	admin := AdminDSN(tb)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		unavailable(tb, err.Error())
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("shirube_test_%d_%d", os.Getpid(), seq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDatabase(admin, name)
}

// AdminDSN returns the DSN of the cluster's maintenance database, skipping
// (or failing under CI=true) when no cluster runs.
func AdminDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		why := os.Getenv(envError)
		if why == "" {
			why = "pgtest.Main was not called from TestMain"
		}
		unavailable(tb, why)
	}
	return dsn
}

func unavailable(tb testing.TB, why string) {
	tb.Helper()
	msg := "PostgreSQL test cluster unavailable: " + why
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + " (CI=true: PostgreSQL tests must run, not skip)")
	}
	tb.Skip(msg)
}

// withDatabase replaces the database name in a postgres:// DSN.
func withDatabase(dsn, db string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	hostPath, query, _ := strings.Cut(rest, "?")
	host, _, _ := strings.Cut(hostPath, "/")
	out := scheme + "://" + host + "/" + db
	if query != "" {
		out += "?" + query
	}
	return out
}
