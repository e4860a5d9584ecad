package main

import (
	"os"
	"testing"

	"github.com/shirube/shirube/internal/pgtest"
)

// TestMain starts a throw-away PostgreSQL cluster for the tests of the
// store commands (pgtest); they skip when it cannot start.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
