package acp

import (
	"strings"

	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/textcut"
)

// Notices (DESIGN §8): where the client advertises session.notices, each
// warning of a response's or a turn's _meta.coda.warnings (a retired
// schema, an MCP server that failed, a model without tools, a compaction, a
// discarded option) is also a `notice` session update, so that the user
// sees it; once each. A session's own warnings (those of the response that
// opened it, and of its options) are noticed once for the session; a
// turn's, once in the turn, after those of its session.

// maxNoticeTitle is the longest title a notice is given, in bytes: a longer
// warning is cut there for the title and given whole as the description.
const maxNoticeTitle = 120

// appendNotice appends the update object of the notice of warning w.
func appendNotice(b []byte, w string) []byte {
	w = strings.TrimSpace(w)
	title, description := w, ""
	if len(w) > maxNoticeTitle {
		cut := textcut.At(w, maxNoticeTitle-3)
		if sp := strings.LastIndexByte(cut, ' '); sp > len(cut)*2/3 {
			cut = cut[:sp]
		}
		title, description = strings.TrimRight(cut, " ,.;:-")+"…", w
	}
	if title == "" {
		title = "warning"
	}
	b = append(b, `{"sessionUpdate":"notice","severity":"warning","title":`...)
	b = jsonrpc.AppendString(b, title)
	if description != "" {
		b = append(b, `,"description":`...)
		b = jsonrpc.AppendString(b, description)
	}
	return append(b, '}')
}

// maxNoticed bounds the warnings a session remembers having noticed.
const maxNoticed = 256

// noticeSession sends the notices of a session's own warnings that it has
// not had yet, and remembers them for its turns.
func (s *Server) noticeSession(sess *session, warnings []string) {
	if len(warnings) == 0 || !s.caps.Notices() {
		return
	}
	for _, w := range warnings {
		sess.mu.Lock()
		seen := sess.noticed[w]
		if !seen && len(sess.noticed) < maxNoticed {
			if sess.noticed == nil {
				sess.noticed = map[string]bool{}
			}
			sess.noticed[w] = true
		}
		sess.mu.Unlock()
		if !seen {
			s.writeUpdate(sess.id, appendNotice(nil, w))
		}
	}
}

// turnNotices is what a turn's sink needs to send notices: nil when the
// client takes none (offered false), else the warnings the session has
// had noticed.
func (sess *session) turnNotices(offered bool) map[string]bool {
	if !offered {
		return nil
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	seen := make(map[string]bool, len(sess.noticed)+4)
	for w := range sess.noticed {
		seen[w] = true
	}
	return seen
}

// notice sends the notice of a turn's warning w, once (nil seen sends
// none).
func (k *updateSink) notice(w string) error {
	if k.seen == nil || k.seen[w] {
		return nil
	}
	k.seen[w] = true
	b := appendNotice(appendUpdateHead(k.buf[:0], k.sessionID), w)
	b = append(b, "}}"...)
	k.buf = b
	return k.send(b)
}

// noticeAll sends the notices of warnings not sent yet.
func (k *updateSink) noticeAll(warnings []string) error {
	for _, w := range warnings {
		if err := k.notice(w); err != nil {
			return err
		}
	}
	return nil
}
