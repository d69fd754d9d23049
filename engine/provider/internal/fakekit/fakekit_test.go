package fakekit

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/coda-acp/coda/engine/provider"
)

// Broken names the first rule a request breaks, with its refusal; a plain
// error is a 400; a request that keeps every rule has none.
func TestBroken(t *testing.T) {
	rules := []Rule[int]{
		{Name: "positive", Check: func(n int) error { return If(n <= 0, "%d is not positive", n) }},
		{Name: "small", Check: func(n int) error {
			if n > 10 {
				return &Refusal{Status: 413, Type: "too_large", Msg: "too large"}
			}
			return nil
		}},
		{Name: "odd", Check: func(n int) error {
			if n%2 == 0 {
				return errors.New("even")
			}
			return nil
		}},
	}
	for _, tt := range []struct {
		n      int
		rule   string
		status int
		msg    string
	}{
		{-2, "positive", 400, "-2 is not positive"},
		{12, "small", 413, "too large"},
		{4, "odd", 400, "even"},
		{3, "", 0, ""},
	} {
		name, ref := Broken(rules, tt.n)
		got := fmt.Sprint(name, ref)
		if name != tt.rule || (ref == nil) != (tt.rule == "") || ref != nil && (ref.Status != tt.status || ref.Msg != tt.msg) {
			t.Errorf("%d: %s; want %s %d %q", tt.n, got, tt.rule, tt.status, tt.msg)
		}
	}
}

// The Files store keeps what is uploaded until it is deleted, and counts
// both; an upload is read as it streams, its fields beside its file.
func TestFiles(t *testing.T) {
	var fs Files
	a := fs.Add(File{Filename: "a.png"}, func(n int) string { return fmt.Sprintf("f%d", n) })
	fs.Add(File{Filename: "b.png"}, func(n int) string { return fmt.Sprintf("f%d", n) })
	if a.ID != "f1" || len(fs.List()) != 2 || fs.Uploads() != 2 {
		t.Fatalf("added %+v, listed %v", a, fs.List())
	}
	if !fs.Delete("f1") || fs.Delete("f1") || fs.Deletes() != 1 {
		t.Error("a file deleted twice, or not at all")
	}
	if _, ok := fs.Get("f1"); ok {
		t.Error("a deleted file is kept")
	}

	data := make([]byte, 1000)
	body, _, ctype := provider.MultipartFile([][2]string{{"purpose", "vision"}}, "file", "a.png", "image/png", data)
	r := httptest.NewRequest("POST", "/files", body)
	r.Header.Set("Content-Type", ctype)
	var counted Bytes
	counted.Count(r)
	u, err := ReadUpload(r)
	if err != nil || !u.HasFile || u.File.Bytes != 1000 || u.File.MIMEType != "image/png" || u.Fields["purpose"] != "vision" {
		t.Fatalf("%+v, %v", u, err)
	}
	if counted.Total() <= 1000 {
		t.Errorf("counted %d bytes", counted.Total())
	}
	r = httptest.NewRequest("POST", "/files", nil)
	r.Header.Set("Content-Type", "application/json")
	if _, err := ReadUpload(r); !errors.Is(err, ErrNotMultipart) {
		t.Errorf("a JSON body: %v", err)
	}
}
