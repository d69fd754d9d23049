package acp

import (
	"context"
	"time"

	"github.com/coda-acp/coda/internal/jsonrpc"
)

// The live model list (DESIGN §16): beside [picker] models, the model
// option offers the models the providers list (Models.Discover, cmd/coda's).
// They are asked once, in the background, when the first session starts,
// and the answer is kept for the process (pickers.Listing). session/new waits for it at most
// newSessionListWait, off the read loop, so that a headless client that
// picks a listed model right after session/new (acpx --model) finds it
// offered when the providers answer promptly; a later list follows the
// answer.
// session/load and session/resume, which run off the read loop already,
// wait for it (awaitListed): everything a load sends comes before its
// response (ACP-LOAD-002), and a client that restores a session and at once
// picks a listed model (acpx after a restart) finds it offered.
// A session that was answered before the list arrived is sent a
// config_option_update with it once, after the answer that opened it: never
// before the client knows the session, never inside a prompt's turn (after
// its final answer comes only the prompt's response: it waits for that),
// never after the session's close. An empty list changes nothing and is
// not sent.

// startListing asks for the list in the background, the first time a
// session starts; later calls do nothing. Once it is in, each open
// session that was answered without it is sent it.
func (s *Server) startListing() {
	s.pick.Listing.Start(func(models []ListedModel) {
		s.log.Debug("the providers' models are listed", "models", len(models))
		s.mu.Lock()
		open := make([]*session, 0, len(s.sessions))
		for _, sess := range s.sessions {
			open = append(open, sess)
		}
		s.mu.Unlock()
		for _, sess := range open {
			s.sendListed(sess)
		}
	})
}

// maxListWait bounds how long a load or resume waits for the list. The
// list bounds itself (cmd/coda asks each provider within 5 s); this is
// the backstop for a Discover that does not, a little longer so as not
// to cut the list's own bound short. A list later than this comes as a
// config_option_update after the answer, as it does after session/new.
const maxListWait = 6 * time.Second

// newSessionListWait bounds how long session/new waits for the list.
const newSessionListWait = time.Second

// awaitListed waits for the list, asking for it if no session has yet,
// for at most d (maxListWait for a load or resume) or until ctx ends: off
// the read loop only.
func (s *Server) awaitListed(ctx context.Context, d time.Duration) {
	if !s.pick.Listing.On() {
		return
	}
	s.startListing()
	if !s.pick.Listing.Await(ctx, d) {
		s.log.Info("the providers' models were not listed in time for the session's answer: they follow it", "after", d)
	}
}

// sendListed sends the session a config_option_update with the list, once,
// when the list has arrived, the session's opening answer is out
// (announced) and what it was answered did not have it yet.
func (s *Server) sendListed(sess *session) {
	if models, ok := s.pick.Listing.Listed(); !ok || len(models) == 0 {
		return
	}
	sess.mu.Lock()
	send := sess.announced && !sess.listSent && !sess.answering
	sess.listSent = sess.listSent || send
	sess.mu.Unlock()
	if !send {
		return
	}
	opts := s.configOptions(sess)
	// Under s.mu: a session closed meanwhile is out of the map before its
	// close is answered, so nothing follows that answer.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.id] == sess {
		s.writeUpdate(sess.id, jsonrpc.AppendJSON(nil, configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: opts}))
	}
}

// answered is called once a prompt's answer is out: the list, if it came
// during the turn, follows.
func (s *Server) answered(sess *session) {
	sess.mu.Lock()
	sess.answering = false
	sess.mu.Unlock()
	s.sendListed(sess)
}
