package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// A JSONDecoder decodes the JSON data of one event after another, keeping
// its buffers between them: json.Unmarshal builds its decoding state anew
// for every call and checks the whole input before decoding it. Issue 20
// holds the stream decoders to no more CPU per delta than a plain relay
// that calls json.Unmarshal on each event; with json.Unmarshal they spend
// as much as the relay and more (chat completions' chunk decodes more
// fields than the relay's), with this one about a fifth less
// (BenchmarkStream and BenchmarkResponsesStream in openai, BenchmarkStream
// in ollama, each against its relay). FuzzJSONDecoder holds it to
// json.Unmarshal. The zero value is ready to use.
type JSONDecoder struct {
	dec *json.Decoder
	src []byte // what Read hands the decoder: one event's data
	fed int64  // bytes fed to dec so far
}

// Decode decodes data, which must be exactly one JSON value (surrounding
// space aside), into v, as json.Unmarshal would.
func (d *JSONDecoder) Decode(data []byte, v any) error {
	if d.dec == nil {
		d.dec = json.NewDecoder(reader{d})
		d.fed = 0
	}
	data = bytes.Trim(data, " \t\r\n") // JSON's space, not Unicode's
	d.src = data
	d.fed += int64(len(data))
	err := d.dec.Decode(v)
	if err == nil && d.dec.InputOffset() != d.fed {
		// Anything left would be taken for the start of the next
		// event's value.
		err = errors.New("invalid character after the JSON value")
	}
	if err != nil {
		d.dec = nil // a decoder that failed keeps failing
	}
	d.src = nil
	return err
}

// reader feeds a JSONDecoder's data to its json.Decoder, then says EOF so
// that the decoder never waits on the next event.
type reader struct{ d *JSONDecoder }

func (r reader) Read(p []byte) (int, error) {
	if len(r.d.src) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.d.src)
	r.d.src = r.d.src[n:]
	return n, nil
}
