package index_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/shirube/shirube/internal/index"
)

// Build reads a data folder into the page database and writes a new
// generation of the index; Open loads the live generation for searching.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "shirube-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		log.Fatal(err)
	}
	doc := "# パスワード\n\nパスワードを忘れた場合はヘルプデスクに連絡して再発行を依頼してください。\n"
	if err := os.WriteFile(filepath.Join(data, "password.md"), []byte(doc), 0o644); err != nil {
		log.Fatal(err)
	}

	sum, err := index.Build(ctx, index.BuildOptions{
		DataDir:     data,
		DatabaseDir: filepath.Join(dir, "database"),
		Dir:         filepath.Join(dir, "index"),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("generation %d: %d document, %d page, %d chunk\n", sum.Generation, sum.Documents, sum.Pages, sum.Chunks)

	ix, err := index.Open(ctx, filepath.Join(dir, "index"), index.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("chunks loaded:", ix.Len())
	// Output:
	// generation 1: 1 document, 1 page, 1 chunk
	// chunks loaded: 1
}
