package main

import (
	"strings"
	"testing"
)

func testOptimizeNeedsInput(t *testing.T) {
	_, _, err := run(t, "", "optimize")
	if err == nil || !strings.Contains(err.Error(), "--undo") {
		t.Errorf("optimize without arguments: %v, want a hint about the results CSV and --undo", err)
	}
}
