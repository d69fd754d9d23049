package sse

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestJSONDecoder_Decode(t *testing.T) {
	type v struct {
		A string `json:"a"`
	}
	var d JSONDecoder
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{`{"a":"1"}`, "1", true},
		{`  {"a":"2"}  ` + "\n", "2", true},
		{`{"a":"3"} {"a":"x"}`, "", false},
		{`{"a":"4"}`, "4", true}, // the decoder recovers after an error
		{`{"a":`, "", false},
		{`{"a":"5"}`, "5", true},
		{`{"a":"6"}}`, "", false},
		{`{"a":7}`, "", false},
		{`{"a":"8"}`, "8", true},
		{``, "", false},
		{`{"a":"9"}`, "9", true},
	} {
		var got v
		err := d.Decode([]byte(tt.in), &got)
		if (err == nil) != tt.ok || tt.ok && got.A != tt.want {
			t.Errorf("Decode(%q) = %+v, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		var ref v
		if refErr := json.Unmarshal([]byte(tt.in), &ref); (refErr == nil) != tt.ok {
			t.Errorf("Decode(%q) disagrees with json.Unmarshal (%v)", tt.in, refErr)
		}
	}
}

// FuzzJSONDecoder holds a decoder reused across events to json.Unmarshal
// of each: the same verdict and, when both take the input, the same value.
func FuzzJSONDecoder(f *testing.F) {
	f.Add(`{"a":"x"}`, `{"a":1}`)
	f.Add(`{"choices":[{"index":0,"delta":{"content":" module"},"finish_reason":null}],"usage":null}`, `{"type":"response.output_text.delta","delta":"Hi"}`)
	f.Add(`{"message":{"role":"assistant","content":"The"},"done":false}`, "{\"a\":\"\\ud83d\\ude00\"} \n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var d JSONDecoder
		for _, in := range []string{a, b, a} {
			var got, want any
			err := d.Decode([]byte(in), &got)
			wantErr := json.Unmarshal([]byte(in), &want)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("Decode(%q): %v, json.Unmarshal: %v", in, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(%q) = %#v, json.Unmarshal %#v", in, got, want)
			}
		}
	})
}
