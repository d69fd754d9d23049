package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/store"
)

func TestCheckRunID(t *testing.T) {
	for _, id := range []string{"20260102-150405-a1b2c3", "run-1", "r.1"} {
		if err := store.CheckRunID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "../x", "../../x", "a/b", `a\b`, "/etc", "x\x00y", `..\x`} {
		if err := store.CheckRunID(id); err == nil {
			t.Errorf("%q was taken for a run id", id)
		}
	}
}

// ReadRun never reads outside the state directory, even where a run.json
// waits at the path a run id would lead to.
func TestReadRun_notAPath(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	outside := filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "run.json"), []byte(`{"runId": "outside", "status": "answered"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rr, err := store.New(state).ReadRun("../../outside")
	if err == nil || !strings.Contains(err.Error(), "not a run id") {
		t.Errorf("ReadRun(../../outside) = %+v, %v", rr, err)
	}
}
