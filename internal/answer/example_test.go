package answer_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// The extractive generator answers offline by quoting the evidence it was
// given, each quote cited by number.
func ExampleExtractive_Generate() {
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
	opt := index.BuildOptions{DataDir: data, DatabaseDir: filepath.Join(dir, "database"), Dir: filepath.Join(dir, "index")}
	if _, err := index.Build(ctx, opt); err != nil {
		log.Fatal(err)
	}
	ix, err := index.Open(ctx, opt.Dir, index.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	question := "パスワードを忘れたらどうすればいい？"
	results, _, err := retrieve.New(ix).Search(ctx, question, retrieve.Options{K: 1, AutoWeight: true})
	if err != nil {
		log.Fatal(err)
	}

	gen := answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})
	a, err := gen.Generate(ctx, question, results)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Text)
	for _, e := range a.Evidence {
		fmt.Printf("[%d] %s (page %d)\n", e.N, e.File, e.Page)
	}
	// Output:
	// パスワードを忘れた場合はヘルプデスクに連絡して再発行を依頼してください。 [1]
	// [1] database/password/page_001.md (page 1)
}
