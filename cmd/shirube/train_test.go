package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainFlagsRefused checks that train refuses a shapes share out of
// range and a --laws folder that is not an unpacked law-corpus-ja, saying
// how to fix each (training itself is tested in internal/reader).
func TestTrainFlagsRefused(t *testing.T) {
	data := filepath.Join("..", "..", "internal", "reader", "testdata", "tiny_squad.json")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--shapes", "1.5"}, "from 0 to 1"},
		{[]string{"--shapes", "-0.1"}, "from 0 to 1"},
		{[]string{"--laws", t.TempDir()}, "unpack law-corpus-ja"},
	}
	for _, tt := range tests {
		args := append([]string{"train", "--only", "reader", "--training-data", data, "--out", filepath.Join(t.TempDir(), "m.json")}, tt.args...)
		if _, _, err := run(t, "", args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one saying %q", tt.args, err, tt.want)
		}
	}
}
