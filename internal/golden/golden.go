// Package golden compares test output with golden files and rewrites them
// when the tests run with -update:
//
//	golden.Check(t, filepath.Join("testdata", "report.golden.md"), []byte(got))
//
//	go test ./internal/eval/diffeval -update   # accept the new output
//
// It registers the -update flag for every test binary that imports it, so
// test packages do not define their own. It is imported only by tests.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Check fails t unless got equals the content of the file at path. With
// -update it first writes got there, creating the folder.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run go test -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
