package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/web"
)

// TestServeFollowsNewGeneration: a running server answers from the
// generation `shirube index` installs after it started — a removed source
// is no longer cited once the watcher polled — and /api/status names the
// generation served. Every cited page file exists when it is cited.
//
// With the freshen check (as `serve` runs it) there is no window at all:
// the first question after `shirube index` switched generations is
// answered from the new one, with no watcher poll in between.
func TestServeFollowsNewGeneration(t *testing.T) {
	for _, freshen := range []bool{false, true} {
		t.Run(map[bool]string{false: "watcher", true: "freshen"}[freshen], func(t *testing.T) { testServeFollows(t, freshen) })
	}
}

func testServeFollows(t *testing.T, freshen bool) {
	fixture := indexedFixture(t)
	ws := workspace(t, fixture)
	cfg := config.Default()
	cfg.DataDir, cfg.DatabaseDir, cfg.IndexDir = "data", "database", ".shirube"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	asst, _, err := newAssistant(ctx, cfg, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Assistant: asst, Tokenizer: asst.Searcher().Index().Analyzer(), DataDir: "data"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	f := newFollower(cfg, asst, func(string) {})
	if freshen {
		asst.SetFreshen(f.freshen)
	} else {
		done := make(chan struct{})
		go func() { defer close(done); f.watch(ctx, 20*time.Millisecond) }()
		defer func() { cancel(); <-done }()
	}

	const question = "バックアップからの復旧手順は？"
	const gone = "database/runbooks/backup_restore/"
	ask := func() web.AskResponse {
		t.Helper()
		body, _ := json.Marshal(web.AskRequest{Question: question})
		req, _ := http.NewRequest("POST", hs.URL+"/api/ask", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out web.AskResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("ask: %d %v", resp.StatusCode, err)
		}
		return out
	}
	generation := func() int {
		t.Helper()
		resp, err := hs.Client().Get(hs.URL + "/api/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st web.StatusResponse
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st.Index.Generation
	}
	if first := ask(); len(first.Evidence) == 0 || !strings.HasPrefix(first.Evidence[0].File, gone) {
		t.Fatalf("before the rebuild the answer should cite %s: %+v", gone, first.Evidence)
	}
	if g := generation(); g != 1 {
		t.Fatalf("status generation %d, want 1", g)
	}

	if err := os.Remove(filepath.Join(ws, "data/runbooks/backup_restore.md")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "index")
	if _, err := os.Stat(filepath.Join(ws, gone)); !os.IsNotExist(err) {
		t.Fatalf("the removed source's pages are still in the database: %v", err)
	}
	var rep web.AskResponse
	if freshen {
		// No poll: the question itself brings the new generation in.
		rep = ask()
		if g := generation(); g != 2 {
			t.Fatalf("after the first question the server answers from generation %d, want 2", g)
		}
	} else {
		// Wait for the watcher (polling every 20 ms); the limit only stops
		// a broken watcher from hanging the test.
		for limit := time.Now().Add(time.Minute); generation() != 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(limit) {
				t.Fatal("the server never swapped in generation 2")
			}
		}
		rep = ask()
	}
	for _, e := range rep.Evidence {
		if strings.HasPrefix(e.File, gone) {
			t.Errorf("after the swap the answer still cites %s", e.File)
		}
		if _, err := os.Stat(filepath.Join(ws, strings.SplitN(e.File, "#", 2)[0])); err != nil {
			t.Errorf("cited page %s does not exist: %v", e.File, err)
		}
	}
}
