package store

import "errors"

// ForkSession writes a new session's file from the session from's (DESIGN
// §22): as its header, what fork makes of from's state (its id, its
// directories); then every exchange from's file holds, in order, as they
// were written. from's file is only read, one exchange at a time, so a
// long session is never held whole; the new file is synced once, at its
// end. It returns the new session and how many exchanges it took. A fork
// that fails (from missing or corrupt among the reasons) leaves no file
// behind.
func (s *Store) ForkSession(from string, fork func(SessionState) SessionState) (*Session, int, error) {
	l, err := s.LoadSession(from, func(*Exchange) {})
	if err != nil {
		return nil, 0, err
	}
	state := fork(l.State)
	ss, err := s.CreateSession(state)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	var werr error
	err = l.Session.Replay(func(ex *Exchange) {
		if werr == nil {
			ss.mu.Lock()
			werr = ss.append(nil, ex, false)
			ss.mu.Unlock()
			n++
		}
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		ss.mu.Lock()
		_, err = ss.write(nil, true) // synced, whole
		ss.mu.Unlock()
	}
	if err != nil {
		return nil, 0, errors.Join(err, s.DeleteSession(state.ID))
	}
	return ss, n, nil
}
