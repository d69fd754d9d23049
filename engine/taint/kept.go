package taint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A session's Index walks its roots once; a one-turn `coda run` is a
// session, so each would walk a workspace whole again to find its private
// files (issue 32: a turn with one grep call in a 20,000-file tree cost
// 3.7 times what it did before the walk). An Index opened on a folder
// (OpenIndex: coda's state) keeps there, after each walk, the listing of
// what it found: the private files' names (never their content), the
// folders it went through and their times. The next session under the
// same roots and globs takes that listing instead of a walk when a stat
// of each folder says none changed since, as a later turn of a session
// does, and reads the private files it names. A partial walk is kept as
// it was, and said once a session as it was (Untold).

// maxKept is how many listings the folder keeps: the most recently
// written, one for each workspace (roots and globs).
const maxKept = 64

// maxListingBytes bounds a listing read back: maxRootEntries folders at
// most, with their paths.
const maxListingBytes = 32 << 20

// listing is what is kept of a walk.
type listing struct {
	Key     string               `json:"key"` // privatePaths.key
	At      time.Time            `json:"at"`  // when the walk began
	Partial bool                 `json:"partial,omitempty"`
	Entries int                  `json:"entries"`
	Dirs    map[string]time.Time `json:"dirs"`
	Files   [][2]string          `json:"files"` // root, path under it
}

// OpenIndex is NewIndex for a session that keeps what its walks find in
// dir, and starts from what an earlier session there kept ("" keeps
// nothing: NewIndex).
func OpenIndex(dir string) *Index {
	ix := NewIndex()
	ix.keep = dir
	return ix
}

// keptFile is the file of the listing for key.
func (ix *Index) keptFile(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(ix.keep, hex.EncodeToString(sum[:12])+".json")
}

// load is the private files of the listing kept for paths, read, when no
// folder it names changed since its walk; nil otherwise. ix.mu is held.
func (ix *Index) load(paths *privatePaths) *rootFiles {
	file, err := os.Open(ix.keptFile(paths.key))
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(file, maxListingBytes+1))
	file.Close()
	var l listing
	if err != nil || len(b) > maxListingBytes || json.Unmarshal(b, &l) != nil || l.Key != paths.key || len(l.Dirs) == 0 {
		return nil
	}
	recent := l.At.Add(-settle)
	for dir, mod := range l.Dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.ModTime().Equal(mod) || !mod.Before(recent) {
			return nil
		}
	}
	f := &rootFiles{dirs: l.Dirs, stamps: map[string]stamp{}, partial: l.Partial, entries: l.Entries}
	f.readListed(l.Files)
	return f
}

// readListed reads the private files of a kept listing, within read's
// bounds.
func (f *rootFiles) readListed(files [][2]string) {
	total := 0
	roots := map[string]*os.Root{}
	defer func() {
		for _, r := range roots {
			r.Close()
		}
	}()
	for _, rf := range files {
		if len(f.paths) >= maxRootFiles || total >= maxRootBytes {
			f.partial = true
			return
		}
		real, rel := rf[0], rf[1]
		r, ok := roots[real]
		if !ok {
			var err error
			if r, err = os.OpenRoot(real); err != nil {
				r = nil
			}
			roots[real] = r
		}
		if r == nil {
			continue
		}
		text, st, err := readRegular(r, filepath.FromSlash(rel), min(maxRootFileBytes, maxRootBytes-total))
		if err != nil {
			continue
		}
		abs := filepath.Join(real, filepath.FromSlash(rel))
		f.stamps[abs] = st
		f.listed = append(f.listed, rf)
		if len(text) == 0 {
			continue
		}
		total += len(text)
		f.lines.add(string(text), len(f.paths))
		f.paths = append(f.paths, abs)
		if f.lines.full {
			f.partial = true
			return
		}
	}
}

// save keeps the listing of f, a walk for paths begun at at, and drops
// the oldest listings past maxKept. What cannot be written is not kept:
// the next session walks. ix.mu is held.
func (ix *Index) save(paths *privatePaths, f *rootFiles, at time.Time) {
	b, err := json.Marshal(listing{Key: paths.key, At: at, Partial: f.partial, Entries: f.entries, Dirs: f.dirs, Files: f.listed})
	if err != nil || os.MkdirAll(ix.keep, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(ix.keep, ".listing-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err != nil || cerr != nil || os.Rename(tmp.Name(), ix.keptFile(paths.key)) != nil {
		os.Remove(tmp.Name())
		return
	}
	entries, err := os.ReadDir(ix.keep)
	if err != nil || len(entries) <= maxKept {
		return
	}
	type kept struct {
		name string
		mod  time.Time
	}
	var all []kept
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && filepath.Ext(e.Name()) == ".json" {
			all = append(all, kept{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b kept) int { return b.mod.Compare(a.mod) })
	for _, k := range all[min(len(all), maxKept):] {
		os.Remove(filepath.Join(ix.keep, k.name))
	}
}
