package optimize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestUndoTwice: undoing a run whose copies went into folders it created
// removes them; undoing it again finds nothing to do and reports no
// problem (it used to call the vanished folders "not inside the
// database" and fail).
func TestUndoTwice(t *testing.T) {
	root := t.TempDir()
	page := filepath.Join(root, "database", "新規", "手順", "page_001.md")
	if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
		t.Fatal(err)
	}
	body := []byte("# copy\n")
	if err := os.WriteFile(page, body, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	m := Manifest{Version: 1, Root: root,
		Files: []ManifestFile{{Path: "database/新規/手順/page_001.md", Source: "database/x/page_001.md", SHA256: hex.EncodeToString(sum[:])}},
		Dirs:  []string{"database/新規", "database/新規/手順"}}
	b, _ := json.Marshal(m)
	mp := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(root, "database")
	rep, err := Undo(t.Context(), mp, db)
	if err != nil || len(rep.Problems) > 0 || len(rep.Removed) != 3 {
		t.Fatalf("first undo: %+v %v", rep, err)
	}
	rep, err = Undo(t.Context(), mp, db)
	if err != nil || len(rep.Problems) > 0 || len(rep.Removed) != 0 {
		t.Errorf("second undo: %+v %v; want nothing to do", rep, err)
	}
}
