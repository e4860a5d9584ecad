package csvx

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, []string{"#SUMMARY: a\nb"}, []string{"Q", "A"}, [][]string{{"1", "=SUM(A1)"}, {"2", "two\nlines"}})
	if err != nil {
		t.Fatal(err)
	}
	// A file that starts with a summary line has no byte-order mark.
	want := "#SUMMARY: a b\nQ,A\n1,'=SUM(A1)\n2,\"two\nlines\"\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	h, rows, _, err := ReadAll(strings.NewReader(strings.SplitN(b.String(), "\n", 2)[1]))
	if err != nil || len(h) != 2 || rows[0][1] != "=SUM(A1)" || rows[1][1] != "two\nlines" {
		t.Errorf("read back %q %q %v", h, rows, err)
	}
}

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.csv")
	if err := WriteFile(path, []string{"A"}, [][]string{{"1"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []string{"A"}, [][]string{{"2"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != BOM+"A\n2\n" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600 kept", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A folder that cannot be created: the error names the file.
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	if err := WriteFile(filepath.Join(blocker, "x.csv"), []string{"A"}, nil); err == nil || !strings.Contains(err.Error(), "x.csv") {
		t.Errorf("err = %v", err)
	}
}

func TestWriteNewNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var names []string
	for range 2 {
		p, err := WriteNew(dir, "r_", now, []string{"#x"}, []string{"A"}, [][]string{{"1"}})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(p))
	}
	if names[0] != "r_20250102_030405.csv" || names[1] != "r_20250102_030405_2.csv" {
		t.Errorf("names %q", names)
	}
	b, _ := os.ReadFile(filepath.Join(dir, names[1]))
	if string(b) != "#x\nA\n1\n" {
		t.Errorf("content %q", b)
	}
}
