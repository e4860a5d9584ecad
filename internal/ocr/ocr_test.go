package ocr

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTSV(t *testing.T) {
	tsv := "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t0\t0\t40\t10\t90\t会議室の\n" +
		"5\t1\t1\t1\t1\t2\t40\t0\t20\t10\t80\t予約\n" +
		"5\t1\t1\t1\t2\t1\t0\t15\t30\t10\t96\tVPN\n" +
		"5\t1\t1\t1\t2\t2\t35\t15\t50\t10\t96\tE-205\n" +
		"5\t1\t1\t1\t2\t3\t85\t15\t10\t10\t96\tは\n" +
		"5\t1\t2\t1\t1\t1\t0\t50\t10\t10\t50\t次\n" +
		"5\t1\t2\t1\t1\t2\t10\t50\t10\t10\tbad\t捨\n" +
		"5\t1\t2\t1\t1\t3\t20\t50\t10\t10\t-1\t \n"
	r, err := ParseTSV(strings.NewReader(tsv))
	if err != nil {
		t.Fatal(err)
	}
	if want := "会議室の予約\nVPN E-205は\n\n次"; r.Text != want {
		t.Errorf("text %q, want %q", r.Text, want)
	}
	if got, want := TesseractOrder(r.Words), "会議室の予約\nVPN E-205は\n\n次"; got != want {
		t.Errorf("Tesseract's order %q, want %q", got, want)
	}
	if len(r.Words) != 6 || r.Words[3] != (Word{Text: "E-205", X0: 35, Y0: 15, X1: 85, Y1: 25, Conf: 96, Block: 1, Par: 1, Line: 2}) {
		t.Errorf("words %+v", r.Words)
	}
	// (90·4 + 80·2 + 96·(3+5+1) + 50·1) / 16
	if want := (90*4 + 80*2 + 96*9 + 50) / 16.0; r.Confidence != want {
		t.Errorf("confidence %v, want %v", r.Confidence, want)
	}
}

func TestMissing(t *testing.T) {
	e := New(Options{Command: filepath.Join(t.TempDir(), "tesseract")})
	_, err := e.Recognize(context.Background(), []byte("x"), 0)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), Packages) {
		t.Errorf("err = %v, want ErrNotInstalled naming %s", err, Packages)
	}
	if e.Runs() != 0 {
		t.Errorf("%d runs", e.Runs())
	}
}
