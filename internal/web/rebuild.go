package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// RebuildState is the progress of the current or last index rebuild.
type RebuildState struct {
	Running bool   `json:"running"`
	DataDir string `json:"data_dir"`
	Phase   string `json:"phase,omitempty"`
	// PhaseJA names the phase for people: 「文書の読み取り」 for extract.
	PhaseJA    string    `json:"phase_ja,omitempty"`
	Done       int       `json:"done"`
	Total      int       `json:"total"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Error      string    `json:"error,omitempty"`
	Runs       int       `json:"runs"` // rebuilds started since the server started
}

// rebuilder runs at most one rebuild at a time.
type rebuilder struct {
	mu    sync.Mutex
	state RebuildState
}

func (rb *rebuilder) snapshot() RebuildState {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	st := rb.state
	st.PhaseJA = phaseJA(st.Phase)
	return st
}

// phaseNames are the Japanese names of the build phases (index.Build,
// the PostgreSQL store's ingest) and of the rebuild's own states.
var phaseNames = map[string]string{
	"starting":  "開始しています",
	"extract":   "文書の読み取り",
	"ocr pages": "画像ページの文字認識（OCR）",
	"read":      "ページの読み込み",
	"ingest":    "文書の取り込み",
	"store":     "データベースへの保存",
	"bm25":      "全文検索索引の作成",
	"embed":     "ベクトルの計算",
	"hnsw":      "ベクトル索引の作成",
	"done":      "完了",
	"failed":    "失敗",
}

// phaseJA is a phase's Japanese name; an unknown phase keeps its own.
func phaseJA(phase string) string {
	if n, ok := phaseNames[phase]; ok {
		return n
	}
	return phase
}

// begin marks a rebuild of dataDir as running; false when one already is.
func (rb *rebuilder) begin(dataDir string) (RebuildState, bool) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.state.Running {
		return rb.state, false
	}
	rb.state = RebuildState{Running: true, DataDir: dataDir, Phase: "starting", StartedAt: time.Now(), Runs: rb.state.Runs + 1}
	return rb.state, true
}

func (rb *rebuilder) progress(phase string, done, total int) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.state.Phase, rb.state.Done, rb.state.Total = phase, done, total
}

func (rb *rebuilder) finish(err error) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.state.Running = false
	rb.state.FinishedAt = time.Now()
	if err != nil {
		rb.state.Error = err.Error()
		rb.state.Phase = "failed"
		return
	}
	rb.state.Phase = "done"
}

// rebuildRequest is the body of POST /api/index/rebuild (optional). The
// folder must be one the server was started with; empty means --data.
type rebuildRequest struct {
	DataFolderPath string `json:"data_folder_path"`
}

// dataDirs returns the folders a rebuild may read: --data first, then the
// allow-list, without repeats.
func (s *Server) dataDirs() []string {
	out := []string{s.opt.DataDir}
	for _, d := range s.opt.DataDirs {
		if d = strings.TrimSpace(d); d != "" && !slices.ContainsFunc(out, func(o string) bool { return sameDir(o, d) }) {
			out = append(out, d)
		}
	}
	return out
}

// allowedDataDir resolves the folder a client asked to rebuild from to
// the server's own spelling of it; it refuses any folder the server was
// not started with (403), so a client can never make the server read, and
// answer from, an arbitrary directory.
func (s *Server) allowedDataDir(asked string) (string, error) {
	asked = strings.TrimSpace(asked)
	if asked == "" {
		return s.opt.DataDir, nil
	}
	for _, d := range s.dataDirs() {
		if sameDir(d, asked) {
			return d, nil
		}
	}
	return "", &requestError{status: http.StatusForbidden, code: "data_folder_not_allowed",
		msg: fmt.Sprintf("フォルダ %q からは再構築できません — このサーバーが索引にするのは起動時に指定したフォルダ（%s）だけです。別のフォルダを使うには、管理者が --data（または SHIRUBE_DATA_ALLOW）で指定してサーバーを起動し直してください",
			asked, strings.Join(s.dataDirs(), "、"))}
}

// sameDir reports whether a and b name the same folder: the same absolute
// path, or the same directory on disk (another spelling, a symbolic link).
func sameDir(a, b string) bool {
	aa, errA := filepath.Abs(a)
	bb, errB := filepath.Abs(b)
	if errA == nil && errB == nil && aa == bb {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && ia.IsDir() && os.SameFile(ia, ib)
}

// handleRebuild starts a rebuild in the background and answers 202 at
// once. While one runs, a second request gets 409 with the running state;
// queries keep being answered from the old index until the new one is
// swapped in.
func (s *Server) handleRebuild(w http.ResponseWriter, r *http.Request) {
	if s.role(r) != RoleAdmin {
		writeError(w, http.StatusForbidden, "admin_only", "インデックスの再構築は管理者だけができます — 管理者用トークン（SHIRUBE_ADMIN_TOKEN）でログインしてください")
		return
	}
	if s.opt.Rebuild == nil {
		writeError(w, http.StatusNotImplemented, "rebuild_disabled", "このサーバーではインデックスの再構築は無効です — `shirube index` を実行してください")
		return
	}
	var req rebuildRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &req); err != nil {
			writeRequestError(w, err)
			return
		}
	}
	dir, err := s.allowedDataDir(req.DataFolderPath)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	st, ok := s.rebuild.begin(dir)
	if !ok {
		writeJSON(w, http.StatusConflict, struct {
			apiError
			Rebuild RebuildState `json:"rebuild"`
		}{apiError{Error: "インデックスを再構築中です — 終わるまでお待ちください", Code: "rebuild_running"}, st})
		return
	}
	s.wg.Add(1)
	go s.runRebuild(s.baseCtx, dir)
	writeJSON(w, http.StatusAccepted, struct {
		Rebuild RebuildState `json:"rebuild"`
	}{st})
}

// runRebuild rebuilds and swaps the new searcher into the assistant.
func (s *Server) runRebuild(ctx context.Context, dir string) {
	defer s.wg.Done()
	searcher, err := s.opt.Rebuild(ctx, dir, s.rebuild.progress)
	if err == nil && searcher == nil {
		err = errors.New("rebuild returned no index")
	}
	if err != nil {
		err = fmt.Errorf("再構築に失敗しました: %w", err)
		s.metrics.rebuilds.WithLabelValues("error").Inc()
		s.opt.Logger.Warn("index rebuild failed", "data_dir", dir, "error", err)
	} else {
		s.asst.Swap(searcher)
		s.metrics.rebuilds.WithLabelValues("ok").Inc()
		s.opt.Logger.Info("index rebuilt", "data_dir", dir)
	}
	s.rebuild.finish(err)
}

// IndexStatus is the index part of GET /api/status.
type IndexStatus struct {
	Ready bool `json:"ready"`
	Status
	Message string `json:"message,omitempty"` // why the index is not ready
}

// StatusResponse is the body of GET /api/status.
type StatusResponse struct {
	Index   IndexStatus  `json:"index"`
	Rebuild RebuildState `json:"rebuild"`
}

func (s *Server) status() StatusResponse {
	resp := StatusResponse{Rebuild: s.rebuild.snapshot()}
	switch {
	case s.asst.Searcher() != nil:
		// What is served, not what is on disk: between a build's switch
		// and the swap (a poll) they differ.
		ix := s.asst.Searcher().Index()
		m := ix.Meta()
		resp.Index = IndexStatus{Ready: true, Status: Status{Documents: m.Documents, Pages: m.Pages, Chunks: ix.Len(), BuiltAt: m.BuiltAt, Embedder: m.Embedder.Kind, DataDir: m.DataDir, Generation: m.Generation}}
	case s.opt.Status == nil:
		resp.Index.Message = NoIndexMessage
	default:
		st, err := s.opt.Status()
		if err != nil {
			resp.Index.Message = NoIndexMessage + " (" + err.Error() + ")"
			break
		}
		resp.Index = IndexStatus{Ready: true, Status: st}
	}
	return resp
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.status())
}
