package web

import (
	"net/http"
	"time"
)

// CorpusResponse is the reply of GET /api/corpus: what the first screen
// shows.
type CorpusResponse struct {
	Documents int       `json:"documents"`
	Pages     int       `json:"pages"`
	Chunks    int       `json:"chunks"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	Examples  []string  `json:"examples"`
}

// handleCorpus answers GET /api/corpus.
func (s *Server) handleCorpus(w http.ResponseWriter, r *http.Request) {
	cat, err := s.catalog(r.Context())
	if err != nil {
		writeRequestError(w, err)
		return
	}
	upd := cat.updated
	if upd.IsZero() {
		upd = cat.store.Meta().BuiltAt
	}
	writeJSON(w, http.StatusOK, CorpusResponse{
		Documents: cat.documents(), Pages: cat.pages, Chunks: cat.store.Len(),
		UpdatedAt: upd, Examples: cat.examples(func(d *docInfo) string { return d.titleOf(s.opt.DataDir, s.opt.DatabaseDir) }),
	})
}

// MeSettings are the retrieval settings an administrator sees.
type MeSettings struct {
	K          int      `json:"k"`
	MaxK       int      `json:"max_k"`
	BM25Weight *float64 `json:"bm25_weight"` // null: chosen per question
	AutoWeight bool     `json:"auto_weight"`
	CanRebuild bool     `json:"can_rebuild"`
	DataDir    string   `json:"data_dir"`
	DataDirs   []string `json:"data_dirs"`
}

// MeResponse is the reply of GET /api/me.
type MeResponse struct {
	Role        string      `json:"role"`
	Settings    *MeSettings `json:"settings,omitempty"`
	MaxQuestion int         `json:"max_question"`
	MaxHistory  int         `json:"max_history"`
}

// me is what the page needs to know about the user.
func (s *Server) me(r *http.Request) MeResponse {
	out := MeResponse{Role: s.role(r), MaxQuestion: s.opt.MaxQuestionRunes, MaxHistory: s.opt.MaxHistory}
	if out.Role != RoleAdmin {
		return out
	}
	def := s.asst.Options().Search
	k := def.K
	if k <= 0 {
		k = 4
	}
	set := &MeSettings{K: k, MaxK: MaxK, AutoWeight: def.AutoWeight, CanRebuild: s.opt.Rebuild != nil,
		DataDir: s.status().Rebuild.DataDir, DataDirs: s.dataDirs()}
	if !def.AutoWeight {
		w := def.BM25Weight
		set.BM25Weight = &w
	}
	out.Settings = set
	return out
}

// handleMe answers GET /api/me.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.me(r))
}
