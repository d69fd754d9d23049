package acp

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/taint"
	statestore "github.com/coda-acp/coda/store"
)

// What the taint gate keeps of a session (the paths its turns read and
// wrote from private content, no content) is saved with the session and
// restored by session/load, so the next turn starts tainted.
func TestSession_taintPersists(t *testing.T) {
	agent, err := blueprint.Parse([]byte("[agent]\nname = \"t\"\n[stages.answer]\nmode = \"output\"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{Agent: agent, UserModel: "answer", Engine: &engine.Engine{Models: answerModels{}, Store: statestore.New(t.TempDir())}})
	if err != nil {
		t.Fatal(err)
	}
	srv.conn = srv.newConn(strings.NewReader(""), io.Discard)
	defer srv.conn.Close()
	cwd := t.TempDir()
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd)).SessionID
	sess := srv.sessions[id]
	want := taint.Session{Read: []string{cwd + "/.env"}, Wrote: []string{cwd + "/notes.txt"}}
	sess.taintedBy(want)
	sess.taintedBy(taint.Session{}) // a turn without the gate keeps it
	if w := srv.load.saveSession(sess, nil); w != "" {
		t.Fatal(w)
	}
	b, err := os.ReadFile(sessionFile(srv.load.store, id))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"taint":{"read":[`) {
		t.Errorf("the session's file keeps no taint: %s", b)
	}
	f, history, err := srv.load.readSession(id)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := srv.load.restore(f, history, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := restored.tainted(); !slices.Equal(got.Read, want.Read) || !slices.Equal(got.Wrote, want.Wrote) {
		t.Errorf("restored taint = %+v, want %+v", got, want)
	}
}
