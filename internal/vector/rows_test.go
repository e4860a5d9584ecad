package vector

import (
	"bytes"
	"errors"
	"testing"
)

// TestRowWriter: a file streamed from another's rows (copied as stored)
// and new vectors equals the file of a store built with Add in the same
// order, and OpenRows refuses a damaged file.
func TestRowWriter(t *testing.T) {
	vecs := [][]float32{{1, 2, 3}, {0, 0, 0}, {-1, 0.5, 2}, {3, 3, -3}, {0.1, 0.2, 0.3}}
	src, _ := NewFlat(3)
	for _, v := range vecs[:4] {
		if _, err := src.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	var file bytes.Buffer
	if _, err := src.WriteTo(&file); err != nil {
		t.Fatal(err)
	}
	rows, err := OpenRows(file.Bytes())
	if err != nil || rows.Dim != 3 || rows.N != 4 {
		t.Fatalf("OpenRows = %+v, %v", rows, err)
	}

	// New order: rows 2–3 of src, a new vector, rows 0–1 of src.
	want, _ := NewFlat(3)
	for _, v := range [][]float32{vecs[2], vecs[3], vecs[4], vecs[0], vecs[1]} {
		want.Add(v)
	}
	var wb, gb bytes.Buffer
	want.WriteTo(&wb)
	rw, err := NewRowWriter(&gb, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Copy(rows, 2, 4); err != nil {
		t.Fatal(err)
	}
	if err := rw.Add(vecs[4]); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err == nil {
		t.Error("Close with rows missing succeeded")
	}
	if err := rw.Copy(rows, 0, 2); err != nil {
		t.Fatal(err)
	}
	if err := rw.Copy(rows, 0, 1); err == nil {
		t.Error("a row past the count was accepted")
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gb.Bytes(), wb.Bytes()) {
		t.Fatal("streamed file differs from the store's")
	}
	if _, err := ReadFlat(bytes.NewReader(gb.Bytes())); err != nil {
		t.Fatalf("streamed file does not load: %v", err)
	}

	bad := bytes.Clone(file.Bytes())
	bad[headerSize+5] ^= 1
	if _, err := OpenRows(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged rows: %v", err)
	}
	if _, err := OpenRows(file.Bytes()[:file.Len()-1]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated file: %v", err)
	}
	if _, err := NewRowWriter(&gb, 0, 1); err == nil {
		t.Error("dimension 0 accepted")
	}
}
