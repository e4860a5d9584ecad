package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/mapped"
)

func sampleChunks() []chunk.Chunk {
	return []chunk.Chunk{
		{ID: "database/a/page_001.md_0", File: "database/a/page_001.md", Source: "a.pdf", Page: 1, Heading: "手順 > 初動", Text: "アラートを確認する。\n影響範囲を調査する。", UpdatedAt: "2024-01-02T03:04:05", Index: 0},
		{ID: "database/a/page_001.md_1", File: "database/a/page_001.md", Source: "a.pdf", Page: 1, Text: "続き", Index: 1},
		{ID: "database/b/page_002.md_0", File: "database/b/page_002.md", Source: "b.md", Page: 2, Heading: "", Text: "", Index: 0},
		{ID: "x", File: "database/a/page_001.md", Page: -1, Index: 7, Text: strings.Repeat("長い本文", 500)},
		{},
	}
}

func chunkFileOf(t testing.TB, chunks []chunk.Chunk) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := writeChunkFile(&buf, chunks); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestChunkFileRoundTrip: every field of every chunk comes back, and the
// pages are listed as the in-memory index lists them.
func TestChunkFileRoundTrip(t *testing.T) {
	for _, chunks := range [][]chunk.Chunk{sampleChunks(), nil} {
		cf, err := openChunkFile(&mapped.File{Data: mapped.Aligned(chunkFileOf(t, chunks))}, false)
		if err != nil {
			t.Fatal(err)
		}
		if cf.Len() != len(chunks) {
			t.Fatalf("Len %d, want %d", cf.Len(), len(chunks))
		}
		for i, want := range chunks {
			if got := cf.Chunk(i); got != want {
				t.Errorf("chunk %d:\n got %+v\nwant %+v", i, got, want)
			}
		}
		mem := &Index{chunks: chunks}
		if got, want := cf.Pages(), mem.Pages(); !slices.Equal(got, want) {
			t.Errorf("Pages %q, want %q", got, want)
		}
	}
}

// TestChunkFileDamaged: damage is refused with an error, never a panic.
func TestChunkFileDamaged(t *testing.T) {
	b := chunkFileOf(t, sampleChunks())
	for name, data := range map[string][]byte{
		"truncated":   b[:len(b)-9],
		"flipped":     flipAt(b, len(b)/2),
		"wrong magic": append([]byte("NOTCHUNK"), b[8:]...),
		"empty":       nil,
	} {
		if _, err := openChunkFile(&mapped.File{Data: mapped.Aligned(data)}, false); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func flipAt(b []byte, i int) []byte {
	c := slices.Clone(b)
	c[i] ^= 0x10
	return c
}

// withChunkCRC rewrites the trailing checksum of a chunk file.
func withChunkCRC(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	c := mapped.Aligned(b)
	binary.LittleEndian.PutUint32(c[len(c)-4:], crc32.Checksum(c[:len(c)-4], castagnoli))
	return c
}

// FuzzChunkFile: a chunk file with a valid checksum but arbitrary content is
// refused or read without panicking.
func FuzzChunkFile(f *testing.F) {
	f.Add(chunkFileOf(f, sampleChunks()))
	f.Add(chunkFileOf(f, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := openChunkFile(&mapped.File{Data: withChunkCRC(data)}, false)
		if err != nil {
			return
		}
		for i := range cf.Len() {
			cf.Chunk(i)
			cf.PageOf(i)
		}
		cf.Pages()
	})
}

// TestOpenLegacyChunksGob: an index written before chunks.bin (chunks.gob)
// still loads and answers exactly like the same index with chunks.bin.
func TestOpenLegacyChunksGob(t *testing.T) {
	root := t.TempDir()
	opt := testOptions(root)
	writeCorpus(t, opt.DataDir, 4)
	ctx := context.Background()
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	cur, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur.store == nil {
		t.Fatal("a new build is not read from chunks.bin")
	}
	// Rewrite the generation the old way: chunks.gob, listed in meta.json.
	gen, _, err := readCurrent(opt.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []chunk.Chunk
	for i := range cur.Len() {
		all = append(all, cur.Chunk(i))
	}
	var buf bytes.Buffer
	if err := encodeGob(&buf, all); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gen, chunksFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(gen, chunksBinFile))
	meta := cur.Meta()
	delete(meta.Files, chunksBinFile)
	meta.Files[chunksFile] = checksum{Size: int64(buf.Len()), CRC32: crc32.Checksum(buf.Bytes(), castagnoli)}
	mb, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(gen, metaFile), mb, 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if old.store != nil || old.Len() != cur.Len() {
		t.Fatalf("legacy index: store %v, %d chunks, want %d from chunks.gob", old.store != nil, old.Len(), cur.Len())
	}
	for i := range cur.Len() {
		if old.Chunk(i) != cur.Chunk(i) {
			t.Fatalf("chunk %d differs", i)
		}
	}
	if !slices.Equal(old.Pages(), cur.Pages()) {
		t.Fatalf("pages %q, want %q", old.Pages(), cur.Pages())
	}
	terms := cur.Terms("障害対応の手順")
	h1, u1 := cur.Lexical(terms, 10)
	h2, u2 := old.Lexical(terms, 10)
	if !reflect.DeepEqual(h1, h2) || u1 != u2 || len(h1) == 0 {
		t.Fatalf("lexical hits differ: %v vs %v", h1, h2)
	}
	if err := verifyGeneration(gen, old.Meta()); err != nil {
		t.Fatalf("verify legacy generation: %v", err)
	}
}
