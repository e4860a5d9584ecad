// Package chunk splits page Markdown into retrieval units as seed 002 §4.1
// specifies: sections by ATX headings (# to ######), then windows of Size runes with
// Overlap runes of overlap, with the heading path prefixed to every chunk.
package chunk

// Defaults from seed 002 §8.6.
const (
	DefaultSize    = 500
	DefaultOverlap = 50
)

// Chunk is one retrieval unit with the metadata of seed 002 §3.3 plus the
// page and the original source.
type Chunk struct {
	ID        string `json:"chunk_id"`    // File + "_" + Index
	File      string `json:"file"`        // page identity: database/.../page_NNN.md
	Source    string `json:"source"`      // original source path relative to the data folder
	Page      int    `json:"page"`        // 1-based page number in the source
	Heading   string `json:"heading"`     // heading path, e.g. "インシデント対応 > 初動対応"; "" before the first heading
	Text      string `json:"text"`        // heading lines + body, as displayed and indexed
	UpdatedAt string `json:"updated_at"`  // source mtime, ISO 8601 "2006-01-02T15:04:05"
	Index     int    `json:"chunk_index"` // 0-based position within File
}
