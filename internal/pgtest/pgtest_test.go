package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestNewDatabase connects to a fresh database and checks that it is empty
// and that the server is PostgreSQL 15.
func TestNewDatabase(t *testing.T) {
	dsn := NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version string
	if err := conn.QueryRow(ctx, "SHOW server_version_num").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version[:2] != "15" {
		t.Errorf("server_version_num = %s, want 15xxxx", version)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("fresh database has %d tables", n)
	}
}

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u@h:5/postgres?sslmode=disable", "postgres://u@h:5/x?sslmode=disable"},
		{"postgres://u@h:5", "postgres://u@h:5/x"},
	} {
		if got := withDatabase(tc.in, "x"); got != tc.want {
			t.Errorf("withDatabase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
