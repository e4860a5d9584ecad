package document

import (
	"fmt"
	"os"
	"testing"

	"github.com/shirube/shirube/internal/ocr"
)

func TestZZDebugOCR(t *testing.T) {
	p := os.Getenv("OCRTSV")
	if p == "" {
		t.Skip()
	}
	f, _ := os.Open(p)
	r, _ := ocr.ParseTSV(f)
	fmt.Println(ocrMarkdown(r))
}
