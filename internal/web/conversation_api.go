package web

import (
	"net/http"
)

// handleConvList answers GET /api/conversations?q=….
func (s *Server) handleConvList(w http.ResponseWriter, r *http.Request) {
	list, err := s.convs.list(browserSession(w, r), r.URL.Query().Get("q"))
	if err != nil {
		writeRequestError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
}

// handleConvCreate answers POST /api/conversations {"title"?}.
func (s *Server) handleConvCreate(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title string `json:"title"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &in); err != nil {
			writeRequestError(w, err)
			return
		}
	}
	title := ""
	if in.Title != "" {
		t, err := checkTitle(in.Title)
		if err != nil {
			writeRequestError(w, err)
			return
		}
		title = t
	}
	c, err := s.convs.create(browserSession(w, r), title)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

// handleConvGet answers GET /api/conversations/{id}.
func (s *Server) handleConvGet(w http.ResponseWriter, r *http.Request) {
	c, err := s.convs.get(browserSession(w, r), r.PathValue("id"))
	if err != nil {
		writeRequestError(w, err)
		return
	}
	if c.Exchanges == nil {
		c.Exchanges = []Exchange{}
	}
	writeJSON(w, http.StatusOK, c)
}

// handleConvRename answers PATCH /api/conversations/{id} {"title"}.
func (s *Server) handleConvRename(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title string `json:"title"`
	}
	if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &in); err != nil {
		writeRequestError(w, err)
		return
	}
	title, err := checkTitle(in.Title)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	c, err := s.convs.update(browserSession(w, r), r.PathValue("id"), func(c *Conversation) error {
		c.Title, c.AutoTitle = title, false
		return nil
	})
	if err != nil {
		writeRequestError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c.summary())
}

// handleConvDelete answers DELETE /api/conversations/{id}.
func (s *Server) handleConvDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.convs.remove(browserSession(w, r), r.PathValue("id")); err != nil {
		writeRequestError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleConvVersion answers POST /api/conversations/{id}/exchanges/{xid}/version
// {"version": n}: the exchange shows its version n (< 1/2 >).
func (s *Server) handleConvVersion(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Version *int `json:"version"`
	}
	if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &in); err != nil {
		writeRequestError(w, err)
		return
	}
	var out Exchange
	_, err := s.convs.update(browserSession(w, r), r.PathValue("id"), func(c *Conversation) error {
		e, _ := c.exchange(r.PathValue("xid"))
		if e == nil {
			return errExchangeNotFound
		}
		if in.Version == nil || *in.Version < 0 || *in.Version >= len(e.Versions) {
			return badRequest("invalid_version", "version は 0〜%d で指定してください", len(e.Versions)-1)
		}
		e.Current = *in.Version
		out = *e
		return nil
	})
	if err != nil {
		writeRequestError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
