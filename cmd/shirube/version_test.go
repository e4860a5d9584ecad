package main

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersion: the version injected with -ldflags wins, then the module
// version go install records, else "(devel)".
func TestBuildVersion(t *testing.T) {
	withModule := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}
	tests := []struct {
		name     string
		injected string
		info     *debug.BuildInfo
		ok       bool
		want     string
	}{
		{"injected at build time", "v1.2.3", withModule, true, "v1.2.3"},
		{"go install records the module version", "", withModule, true, "v0.3.0"},
		{"no build information", "", nil, false, "(devel)"},
		{"source build", "", &debug.BuildInfo{Main: debug.Module{Version: ""}}, true, "(devel)"},
	}
	for _, tt := range tests {
		if got := buildVersion(tt.injected, tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionCommand: `shirube version` prints the version even when the
// .env file cannot be read.
func TestVersionCommand(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/.env"
	if err := os.WriteFile(bad, []byte("NOT A LINE\n'"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "", "--env-file", bad, "version")
	if err != nil || !strings.HasPrefix(out, "shirube ") {
		t.Fatalf("version: %q, %v", out, err)
	}
}
