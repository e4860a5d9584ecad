package main

import (
	"strings"
	"testing"
)

// TestBlankQueriesRefused: a query of only control characters, NULs or
// invalid bytes is refused by search and ask like an empty one, instead
// of returning arbitrary chunks.
func TestBlankQueriesRefused(t *testing.T) {
	fixture := indexedFixture(t)
	workspace(t, fixture)
	for _, q := range []string{"", "\x00\x00", "\x01\x1b\x7f", "\xff\xfe\xc0", "\u200b\ufeff"} {
		for _, cmd := range []string{"search", "ask"} {
			out, _, err := run(t, "", cmd, q)
			if err == nil || !strings.Contains(err.Error(), "空") {
				t.Errorf("%s %q: %v\n%s; want the empty-question refusal", cmd, q, err, out)
			}
		}
	}
}

// TestStoreSecretsMasked: sslpassword and a keyword/value password with
// spaces around "=" are never printed — not by `shirube config`, not in
// the "must be a PostgreSQL DSN" error, not in a connection error.
func TestStoreSecretsMasked(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	t.Setenv("SHIRUBE_STORE", "postgres://u@127.0.0.1:1/db?sslmode=disable&sslpassword=s3cret-ssl")
	out := mustRun(t, "config")
	if strings.Contains(out, "s3cret") || !strings.Contains(out, "sslpassword=****") {
		t.Errorf("config shows the SSL key password:\n%s", out)
	}
	_, errOut, err := run(t, "", "status")
	if err == nil || strings.Contains(err.Error()+errOut, "s3cret") {
		t.Errorf("connection error: %v %s", err, errOut)
	}
	t.Setenv("SHIRUBE_STORE", "host=db user=u password = s3cret-kv")
	out, errOut, err = run(t, "", "config")
	if err == nil || strings.Contains(out+errOut+err.Error(), "s3cret") {
		t.Errorf("keyword/value DSN: %v\n%s%s", err, out, errOut)
	}
}
