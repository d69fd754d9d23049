package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// What only the tests use.

// ID is the session's id.
func (ss *Session) ID() string { return ss.id }

// SessionPath is where session id's file is, of either layout: the one
// that exists, else the one a new session gets. "" for a nil Store.
func (s *Store) SessionPath(id string) string {
	if s == nil {
		return ""
	}
	p := filepath.Join(s.dir, sessionsDir, id+jsonlExt)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(filepath.Join(s.dir, sessionsDir, id+legacyExt)); err == nil {
			return filepath.Join(s.dir, sessionsDir, id+legacyExt)
		}
	}
	return p
}
