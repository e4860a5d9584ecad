package retrieve_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// A Searcher runs hybrid (BM25 + vector) searches over a loaded index; each
// result names the page it came from.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "shirube-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	docs := map[string]string{
		"password.md": "# パスワード\n\nパスワードを忘れた場合はヘルプデスクに連絡して再発行を依頼してください。\n",
		"vpn.md":      "# VPN\n\n社外から接続するときはVPNクライアントを起動し、社員番号でログインします。\n",
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		log.Fatal(err)
	}
	for name, body := range docs {
		if err := os.WriteFile(filepath.Join(data, name), []byte(body), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	opt := index.BuildOptions{DataDir: data, DatabaseDir: filepath.Join(dir, "database"), Dir: filepath.Join(dir, "index")}
	if _, err := index.Build(ctx, opt); err != nil {
		log.Fatal(err)
	}
	ix, err := index.Open(ctx, opt.Dir, index.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}

	results, _, err := retrieve.New(ix).Search(ctx, "パスワードを忘れた", retrieve.Options{K: 1, AutoWeight: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("%s page %d: %s\n", r.Source, r.Page, r.Heading)
	}
	// Output:
	// password.md page 1: パスワード
}
