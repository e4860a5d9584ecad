package dataset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// item is a minimal case schema: an id and a required text.
type item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func checkItem(c *item) error {
	c.ID = strings.TrimSpace(c.ID)
	switch {
	case c.ID == "":
		return errors.New(`no "id"`)
	case c.Text == "":
		return errors.New(`empty "text"`)
	}
	return nil
}

func itemID(c *item) string { return c.ID }

type file struct {
	Version json.RawMessage   `json:"version"`
	Items   []json.RawMessage `json:"items"`
}

func parse(data []byte) ([]item, []error, error) {
	var f file
	if err := Decode(data, &f, "items", &f.Items, "write {\"items\": [...]}"); err != nil {
		return nil, nil, err
	}
	out, problems := Cases(f.Items, "item", checkItem, itemID)
	return out, problems, nil
}

func TestCases(t *testing.T) {
	raw := `{"items": [
		{"id": " a ", "text": "x"},
		{"id": "b"},
		{"text": "x"},
		{"id": "a", "text": "again"},
		{"id": "c", "text": 3},
		7,
		{"id": "d", "text": "y"}
	]}`
	got, problems, err := parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "d" {
		t.Errorf("cases = %+v, want a and d", got)
	}
	wants := []string{
		`item #2 (b) skipped: empty "text"`,
		`item #3 skipped: no "id"`,
		`item #4 (a) skipped: duplicate id "a"`,
		`item #5 (c) skipped: cannot decode`,
		`item #6 skipped: cannot decode`,
	}
	if len(problems) != len(wants) {
		t.Fatalf("problems = %v, want %d", problems, len(wants))
	}
	for i, w := range wants {
		if p := problems[i].Error(); !strings.HasPrefix(p, w) || strings.Contains(p, "\n") {
			t.Errorf("problem %d = %q, want one line starting %q", i, p, w)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{``, "not a JSON object with a items array"},
		{`[]`, "not a JSON object with a items array"},
		{`{"items": 3}`, "not a JSON object with a items array"},
		{`{"version": "1"}`, `no "items" array: write {"items": [...]}`},
	} {
		if _, _, err := parse([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) err = %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "items.json")
	if err := os.WriteFile(p, []byte(`{"items": [{"id": "a", "text": "x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := Load(p, "item file", "pass items.json", parse)
	if err != nil || len(got) != 1 {
		t.Fatalf("Load = %v, %v", got, err)
	}
	_, _, err = Load(filepath.Join(dir, "missing.json"), "item file", "pass items.json", parse)
	if err == nil || !strings.HasPrefix(err.Error(), "read item file: ") || !strings.HasSuffix(err.Error(), "(pass items.json)") {
		t.Errorf("missing file: err = %v", err)
	}
	if err := os.WriteFile(p, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = Load(p, "item file", "pass items.json", parse); err == nil || !strings.HasPrefix(err.Error(), "item file "+p+": no") {
		t.Errorf("bad file: err = %v", err)
	}
}

func TestScalar(t *testing.T) {
	for in, want := range map[string]string{`"1.0"`: "1.0", `1.0`: "1.0", `2`: "2", `null`: "", `{}`: "", ``: ""} {
		if got := Scalar(json.RawMessage(in)); got != want {
			t.Errorf("Scalar(%s) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCases(f *testing.F) {
	f.Add([]byte(`{"items": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}, 1, null]}`))
	f.Add([]byte(`{"items": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, problems, err := parse(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range got {
			if c.ID == "" || seen[c.ID] || c.Text == "" {
				t.Fatalf("unusable case kept: %+v", c)
			}
			seen[c.ID] = true
		}
		for _, p := range problems {
			if strings.Contains(p.Error(), "\n") {
				t.Fatalf("problem spans lines: %q", p)
			}
		}
	})
}
