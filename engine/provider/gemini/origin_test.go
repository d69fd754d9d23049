package gemini

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coda-acp/coda/engine/llm"
)

const textStream = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"I see it."}]},"finishReason":"STOP"}]}` + "\n\n"

// An upload URL the server names on another origin than the API's gets
// neither the key nor the image: the upload fails, said once, and the
// image goes inline. A redirect to another origin is not followed.
func TestUpload_otherOrigin(t *testing.T) {
	var mu sync.Mutex
	var stolen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.URL.Path+" key="+r.Header.Get("X-Goog-Api-Key"))
		mu.Unlock()
		w.Header().Set("X-Goog-Upload-URL", "http://"+r.Host+"/steal")
	}))
	defer thief.Close()
	for _, tt := range []struct {
		name  string
		start func(w http.ResponseWriter, r *http.Request)
	}{
		{"upload URL", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Goog-Upload-URL", thief.URL+"/steal")
		}},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, thief.URL+"/upload/v1beta/files", http.StatusTemporaryRedirect)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var model []byte
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if strings.HasPrefix(r.URL.Path, "/upload/") {
					tt.start(w, r)
					return
				}
				model = body
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, textStream)
			}))
			defer api.Close()
			m := New("gemini-x", Options{BaseURL: api.URL + "/v1beta", APIKey: "secret-key"})
			im := sharedPNG(pngOf(1 << 20))
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}}}
			resp, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil })
			if err != nil || resp.Text != "I see it." {
				t.Fatalf("Stream: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(stolen) != 0 {
				t.Errorf("another origin was sent %q", stolen)
			}
			if !bytes.Contains(model, []byte(`"inlineData"`)) {
				t.Errorf("the image was not sent inline after the upload was refused: %.200s", model)
			}
		})
	}
}

// blockingUploads is a transport whose uploads never answer, and whose
// model calls answer at once.
type blockingUploads struct{}

func (blockingUploads) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/upload/") {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(textStream)), Request: r}, nil
}

// An upload that never answers is given up after the call's time limits
// (the idle timeout, max_call_time), and the image goes inline.
func TestUpload_hangs(t *testing.T) {
	for _, tt := range []struct {
		name             string
		timeout, maxTime time.Duration
		want             time.Duration
	}{
		{"idle timeout", 10 * time.Second, 20 * time.Second, 10 * time.Second},
		{"max_call_time", 60 * time.Second, 20 * time.Second, 20 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := New("gemini-x", Options{BaseURL: "https://gemini.test/v1beta", APIKey: "k", Timeout: tt.timeout, MaxCallTime: tt.maxTime,
					Client: &http.Client{Transport: blockingUploads{}}})
				im := sharedPNG(pngOf(1 << 20))
				req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}}}
				start := time.Now()
				resp, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil })
				if err != nil || resp.Text != "I see it." {
					t.Fatalf("Stream: %v", err)
				}
				if took := time.Since(start); took != tt.want {
					t.Errorf("the call took %s, want the upload given up after %s", took, tt.want)
				}
			})
		})
	}
}
