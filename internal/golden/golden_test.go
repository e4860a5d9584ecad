package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("a"))
	if !r.failed {
		t.Error("a missing golden file must fail")
	}
	*update = true
	r = &recorder{TB: t}
	Check(r, path, []byte("a\n"))
	*update = false
	if b, err := os.ReadFile(path); r.failed || err != nil || string(b) != "a\n" {
		t.Fatalf("-update wrote %q, %v (failed %v)", b, err, r.failed)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("a\n"))
	if r.failed {
		t.Error("equal output failed")
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("b\n"))
	if !r.failed {
		t.Error("different output passed")
	}
}
