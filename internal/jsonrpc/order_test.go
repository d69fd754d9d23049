package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A key's queue holds MaxHeld messages and MaxHeldBytes of params, a
// message held once past them when it must not be lost, and hands them on
// in wire order; then the key is no longer held.
func TestOrder_bounded(t *testing.T) {
	var o Order
	if !o.Idle() {
		t.Fatal("the zero Order holds something")
	}
	if held, _ := o.Hold("a", Held{Method: "m"}); held {
		t.Fatal("held a message for a key not open")
	}
	if !o.Open("a") || o.Open("a") {
		t.Fatal("Open: the first should open, the second find it open")
	}
	for i := range MaxHeld {
		if held, full := o.Hold("a", Held{ID: json.RawMessage(fmt.Sprint(i)), Method: "m"}); !held || full {
			t.Fatalf("message %d: held %v, full %v", i, held, full)
		}
	}
	if held, full := o.Hold("a", Held{Method: "m"}); held || !full {
		t.Fatalf("past MaxHeld: held %v, full %v", held, full)
	}
	last := func(q []Held) bool { return q[len(q)-1].Method == "cancel" }
	for range 3 {
		if !o.HoldOnce("a", Held{Method: "cancel"}, last) {
			t.Fatal("a cancel was not held")
		}
	}
	if got := o.Find(func(m Held) bool { return string(m.ID) == "7" }); got != "a" {
		t.Errorf("Find = %q, want a", got)
	}
	var order []string
	o.Drain("a", func(m Held) { order = append(order, string(m.ID)+m.Method) })
	if len(order) != MaxHeld+1 || order[0] != "0m" || order[MaxHeld-1] != fmt.Sprint(MaxHeld-1)+"m" || order[MaxHeld] != "cancel" {
		t.Errorf("drained %d messages (%v…%v), want the %d held in order and one cancel", len(order), order[0], order[len(order)-1], MaxHeld)
	}
	if !o.Idle() {
		t.Error("still holding after the drain")
	}

	o.Open("b")
	big := json.RawMessage(strings.Repeat("x", MaxHeldBytes/2+1))
	if held, full := o.Hold("b", Held{Params: big}); !held || full {
		t.Fatalf("first large message: held %v, full %v", held, full)
	}
	if held, full := o.Hold("b", Held{Params: big}); held || !full {
		t.Fatalf("second large message: held %v, full %v; want full", held, full)
	}
	if got := o.queues["b"].bytes; got != len(big) {
		t.Errorf("bytes held %d, want %d", got, len(big))
	}
}
