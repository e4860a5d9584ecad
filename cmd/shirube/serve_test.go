package main

import (
	"strings"
	"testing"
)

// TestServeRefusesBadSettings: serve stops at start-up, with a message
// saying what to fix, on a short token or half a TLS configuration.
func TestServeRefusesBadSettings(t *testing.T) {
	offlineEnv(t)
	tests := []struct {
		name, token string
		args        []string
		want        string
	}{
		{"token under 16 characters", "s3cret-token", []string{"--addr", "0.0.0.0:0"}, "SHIRUBE_TOKEN is too short (12 characters)"},
		{"token under 16 characters on loopback", "s3cret-token", []string{"--addr", "127.0.0.1:0"}, "at least 16"},
		{"certificate without key", "", []string{"--addr", "127.0.0.1:0", "--tls-cert", "cert.pem"}, "needs both --tls-cert and --tls-key"},
		{"missing certificate files", "", []string{"--addr", "127.0.0.1:0", "--tls-cert", "nope.pem", "--tls-key", "nope.key"}, "load TLS certificate nope.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SHIRUBE_TOKEN", tt.token)
			args := append([]string{"serve", "--env-file", "", "--index", t.TempDir()}, tt.args...)
			_, _, err := run(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("serve %v: %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
