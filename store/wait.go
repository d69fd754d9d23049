package store

import (
	"context"
	"time"
)

// WaitRun waits until done says the run's run.json is what it waits for
// (its run ended; its process is gone; it entered a stage), and returns
// it. It watches the record rather than spinning: it reads run.json again
// when the record's directory changes (inotify on Linux) and every
// recheck, since a process that dies writes nothing; where no watch
// exists, every recheckUnwatched. `coda result --wait` waits with it.
func (s *Store) WaitRun(ctx context.Context, runID string, done func(*RunRecord) bool) (*RunRecord, error) {
	if _, err := s.ReadRun(runID); err != nil {
		return nil, err
	}
	changed, stop := watchDir(s.RunDir(runID))
	defer stop()
	every := recheck
	if changed == nil {
		every = recheckUnwatched
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		rr, err := s.ReadRun(runID)
		if err != nil {
			return nil, err
		}
		if done(rr) {
			return rr, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-tick.C:
		}
	}
}

// How often WaitRun reads run.json again when nothing told it to: with a
// watch on the record, only to see a process that died; without one,
// often enough that a wait ends soon after its run.
const (
	recheck          = time.Second
	recheckUnwatched = 200 * time.Millisecond
)
