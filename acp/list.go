package acp

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// sessionInfo is one session as session/list shows it.
type sessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt"`

	updated time.Time
}

// listSessions handles session/list: the kept sessions, newest first (the
// latest activity), in pages of listPage; with cwd, only those in it. A
// file that is not a session's is skipped, and logged.
func (s *Server) listSessions(_ *request[listSessionsResponse], p *listSessionsRequest) (*listSessionsResponse, error) {
	cwd := ""
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return nil, fmt.Errorf("%w: cwd: %q is not an absolute path", ErrInvalidParams, *p.Cwd)
		}
		cwd = filepath.Clean(*p.Cwd)
	}
	var after *sessionInfo
	if p.Cursor != nil && *p.Cursor != "" {
		var err error
		if after, err = parseCursor(*p.Cursor); err != nil {
			return nil, err
		}
	}
	infos, err := s.store.list(cwd, s.log)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(infos, newestFirst)
	if after != nil {
		i, _ := slices.BinarySearchFunc(infos, after, newestFirst)
		if i < len(infos) && newestFirst(infos[i], after) == 0 {
			i++
		}
		infos = infos[i:]
	}
	res := &listSessionsResponse{Sessions: infos}
	if len(infos) > listPage {
		res.Sessions = infos[:listPage]
		res.NextCursor = cursorOf(infos[listPage-1])
	}
	if res.Sessions == nil {
		res.Sessions = []*sessionInfo{} // no sessions directory yet
	}
	return res, nil
}

// newestFirst orders sessions by their latest activity, newest first,
// then by id.
func newestFirst(a, b *sessionInfo) int {
	return cmp.Or(b.updated.Compare(a.updated), strings.Compare(a.SessionID, b.SessionID))
}

// A cursor is where the page before it ended: the last session's time and
// id, so a session saved meanwhile neither repeats nor hides another.
func cursorOf(info *sessionInfo) string {
	return base64.RawURLEncoding.EncodeToString([]byte(info.updated.Format(time.RFC3339Nano) + " " + info.SessionID))
}

func parseCursor(c string) (*sessionInfo, error) {
	bad := fmt.Errorf("%w: cursor: %q is not a cursor coda gave", ErrInvalidParams, c)
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	at, id, ok := strings.Cut(string(raw), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil {
		return nil, bad
	}
	return &sessionInfo{SessionID: id, updated: t}, nil
}

// list reads the headers of the sessions' files, those in cwd only when
// cwd is not "".
func (st *store) list(cwd string, log *slog.Logger) ([]*sessionInfo, error) {
	if st.dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	infos := make([]*sessionInfo, 0, len(entries))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || checkSessionID(id) != nil {
			continue
		}
		f, err := readHeader(filepath.Join(st.dir, e.Name()), id)
		if err != nil {
			log.Warn("session/list skips a file that is not a session's", "file", filepath.Join(st.dir, e.Name()), "err", err)
			continue
		}
		if cwd != "" && f.Cwd != cwd {
			continue
		}
		infos = append(infos, &sessionInfo{
			SessionID: id, Cwd: f.Cwd, AdditionalDirectories: f.AdditionalDirectories, Title: f.Title,
			UpdatedAt: f.UpdatedAt.UTC().Format(time.RFC3339Nano), updated: f.UpdatedAt,
		})
	}
	return infos, nil
}
