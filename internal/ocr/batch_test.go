package ocr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecognizeBatch reads the document package's two fixtures (one
// horizontal, one vertical page) and the horizontal one again in one
// batch: each reads as it does alone, with one tesseract run for the three
// and one more for the vertical page's second reading; a second batch
// comes from the cache.
func TestRecognizeBatch(t *testing.T) {
	if err := New(Options{}).Check(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v", err)
		}
		t.Skip(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "document", "testdata", "ocr", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	h, v := read("horizontal.png"), read("vertical.png")
	e := New(Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	rs, errs := e.RecognizeBatch(ctx, [][]byte{h, v, h})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
	}
	if e.Runs() != 2 {
		t.Errorf("%d tesseract runs, want 2 (the batch, then the vertical page as vertical text)", e.Runs())
	}
	if rs[0].Vertical || !rs[1].Vertical || rs[2].Vertical {
		t.Errorf("vertical = %v %v %v, want false true false", rs[0].Vertical, rs[1].Vertical, rs[2].Vertical)
	}
	if !strings.Contains(rs[0].Text, "会議室") || rs[0].Text != rs[2].Text || !strings.Contains(rs[1].Text, "図書室") {
		t.Errorf("texts %q / %q / %q", rs[0].Text, rs[1].Text, rs[2].Text)
	}
	alone, err := New(Options{}).Recognize(ctx, h, 0)
	if err != nil || alone.Text != rs[0].Text {
		t.Errorf("alone %q (%v), in the batch %q", alone.Text, err, rs[0].Text)
	}
	again, errs := e.RecognizeBatch(ctx, [][]byte{v, h})
	if errs[0] != nil || errs[1] != nil || !again[0].Cached || !again[1].Cached || again[0].Text != rs[1].Text || e.Runs() != 2 {
		t.Errorf("second batch: cached %v %v, %d runs in all", again[0].Cached, again[1].Cached, e.Runs())
	}
}

// TestRecognizeBatchFallback: when the batch run fails, each image is read
// on its own.
func TestRecognizeBatchFallback(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "tesseract")
	script := "#!/bin/sh\n" +
		"case \"$1\" in\n" +
		"--list-langs) printf 'List of languages\\njpn\\njpn_vert\\n'; exit 0;;\n" +
		"*.txt) echo 'batch broken' >&2; exit 1;;\n" +
		"esac\n" +
		"cat >/dev/null\n" +
		"printf '5\\t1\\t1\\t1\\t1\\t1\\t0\\t0\\t40\\t10\\t95\\t一頁\\n'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := New(Options{Command: fake})
	rs, errs := e.RecognizeBatch(context.Background(), [][]byte{[]byte("P5 1 1 255\n\x00"), []byte("P5 1 1 255\n\xff")})
	for i := range rs {
		if errs[i] != nil || rs[i].Text != "一頁" {
			t.Errorf("image %d: %q, %v", i, rs[i].Text, errs[i])
		}
	}
	if e.Runs() != 3 {
		t.Errorf("%d runs, want 3: the failed batch, then each image", e.Runs())
	}
}
