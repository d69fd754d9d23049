package store

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// A turn's record is finished after its answer, in the background, but not
// without limit: once maxBehind turns' records are still to be written, a
// run that ends waits for its own (Finish), so a disk slower than the
// turns holds them back rather than their records piling up in memory.
func TestRun_behindIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := New(t.TempDir())
		release := make(chan struct{})
		st.BeforeWrite = func(string) { <-release }
		var runs []*Run
		for i := range maxBehind {
			r := st.NewRun(RunRecord{RunID: fmt.Sprintf("r%d", i)}, nil)
			r.Start()
			r.Finish(&RunRecord{Status: "answered"}) // queued, not written: returns at once
			runs = append(runs, r)
		}
		last := st.NewRun(RunRecord{RunID: "r-last"}, nil)
		var finished atomic.Bool
		go func() {
			last.Finish(&RunRecord{Status: "answered"})
			finished.Store(true)
		}()
		synctest.Wait()
		if finished.Load() {
			t.Errorf("run %d finished with %d records behind it, unwritten", maxBehind+1, maxBehind)
		}
		close(release)
		synctest.Wait()
		if !finished.Load() {
			t.Error("the run did not finish once its record was written")
		}
		for _, r := range runs {
			r.Flush()
		}
		if n := st.behind.Load(); n != 0 {
			t.Errorf("%d records behind once all were written", n)
		}
	})
}
