package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/coda-acp/coda/acp/history"
	statestore "github.com/coda-acp/coda/store"
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
	// Meta notes a session whose file is damaged: what of it a load
	// leaves out.
	Meta *codaMeta[sessionNote] `json:"_meta,omitempty"`
}

// sessionNote is _meta.coda of a damaged session in session/list.
type sessionNote struct {
	Note string `json:"note"`
}

// listSessions handles session/list: the kept sessions, newest first (the
// latest activity), in pages of listPage; with cwd, only those in it. The
// store's index makes a page cost the same however many sessions there
// are. A file that is not a session's is skipped, and logged when found.
func (l *loader) listSessions(ctx context.Context, r *request[listSessionsResponse], p *listSessionsRequest) (*listSessionsResponse, error) {
	cwd := ""
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return nil, fmt.Errorf("%w: cwd: %q is not an absolute path", ErrInvalidParams, *p.Cwd)
		}
		cwd = filepath.Clean(*p.Cwd)
	}
	var after *statestore.SessionInfo
	if p.Cursor != nil && *p.Cursor != "" {
		var err error
		if after, err = history.ParseCursor(*p.Cursor); err != nil {
			return nil, err
		}
	}
	if !l.keeps() {
		return &listSessionsResponse{Sessions: []*sessionInfo{}}, nil
	}
	// Off the read loop: the first list reads the whole index.
	return aside(ctx, r, nil, func(context.Context) (*listSessionsResponse, error) { return l.list(cwd, after) })
}

// list reads one page of the store's listing.
func (l *loader) list(cwd string, after *statestore.SessionInfo) (*listSessionsResponse, error) {
	res := &listSessionsResponse{Sessions: []*sessionInfo{}}
	page, err := l.store.ListSessions(cwd, after, listPage)
	if err != nil {
		return nil, err
	}
	for _, skipped := range page.Skipped {
		l.log.Warn("session/list skips a file that is not a session's: " + skipped)
	}
	for i := range page.Sessions {
		in := &page.Sessions[i]
		info := &sessionInfo{
			SessionID: in.ID, Cwd: in.Cwd, AdditionalDirectories: in.AdditionalDirectories, Title: in.Title,
			UpdatedAt: in.UpdatedAt.UTC().Format(time.RFC3339Nano),
		}
		if in.Note != "" {
			info.Meta = &codaMeta[sessionNote]{Coda: sessionNote{Note: in.Note}}
		}
		res.Sessions = append(res.Sessions, info)
	}
	if page.More {
		res.NextCursor = history.Cursor(&page.Sessions[len(page.Sessions)-1])
	}
	return res, nil
}
