package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// One line of the stream: a piece of the reply, the last one with done
// and the counts, or an error.
type chunk struct {
	Message struct {
		Content   string `json:"content"`
		Thinking  string `json:"thinking"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"` // an object; a string from some versions
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	Error           string `json:"error"`
}

// stream is the state of reading one reply.
type stream struct {
	onDelta func(llm.Delta) error
	started *bool

	dec      sse.JSONDecoder
	c        chunk
	text     sse.Text
	thinking sse.Text
	kept     sse.Meter // the calls' names, held until the reply ends
	calls    []llm.ToolCall
	done     *chunk
}

// read consumes the stream and assembles the reply.
func (s *stream) read(r *sse.Reader) (resp *llm.Response, err error) {
	defer func() {
		if err != nil {
			s.text.Discard()
			s.thinking.Discard()
		}
	}()
	for s.done == nil {
		ev, err := r.Next()
		if err == io.EOF {
			return nil, &sse.Temporary{Err: errors.New("the stream ended before the reply was complete")}
		}
		if err != nil {
			return nil, &sse.Temporary{Err: fmt.Errorf("reading the stream: %w", err)}
		}
		if err := s.line(ev.Data); err != nil {
			return nil, err
		}
	}
	return s.response()
}

func (s *stream) line(data []byte) error {
	s.c = chunk{}
	if err := s.dec.Decode(data, &s.c); err != nil {
		return fmt.Errorf("a stream line is not JSON: %w", err)
	}
	c := &s.c
	if c.Error != "" {
		return lineError(c.Error)
	}
	if t := c.Message.Thinking; t != "" {
		if err := s.thinking.Add(t); err != nil {
			return err
		}
		if err := s.emit(llm.Delta{Thinking: t}); err != nil {
			return err
		}
	}
	if t := c.Message.Content; t != "" {
		if err := s.text.Add(t); err != nil {
			return err
		}
		if err := s.emit(llm.Delta{Text: t}); err != nil {
			return err
		}
	}
	for _, tc := range c.Message.ToolCalls {
		if len(s.calls) >= sse.MaxToolCalls {
			return fmt.Errorf("the reply makes more than %d tool calls", sse.MaxToolCalls)
		}
		if err := s.kept.Add(len(tc.Function.Name)); err != nil {
			return err
		}
		a := llm.ArgsBuffer{Name: tc.Function.Name}
		switch args := bytes.TrimSpace(tc.Function.Arguments); {
		case len(args) == 0 || bytes.Equal(args, []byte("null")):
		case args[0] == '"':
			var str string
			if json.Unmarshal(args, &str) == nil {
				a.WriteString(str)
			}
		default:
			a.Write(args)
		}
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(len(s.calls))
		}
		s.calls = append(s.calls, a.ToolCall(id))
	}
	if c.Done {
		done := *c
		s.done = &done
	}
	return nil
}

func (s *stream) emit(d llm.Delta) error {
	*s.started = true
	return s.onDelta(d)
}

func (s *stream) response() (*llm.Response, error) {
	resp := &llm.Response{
		Text:      s.text.String(),
		Thinking:  s.thinking.String(),
		ToolCalls: s.calls,
		Usage:     llm.Usage{InputTokens: s.done.PromptEvalCount, OutputTokens: s.done.EvalCount},
	}
	switch {
	case s.done.DoneReason == "length":
		resp.StopReason = llm.StopMaxTokens
	case len(resp.ToolCalls) > 0:
		resp.StopReason = llm.StopToolUse // Ollama ends a reply with calls with "stop"
	default:
		resp.StopReason = llm.StopEndTurn
	}
	return resp, errors.Join(s.text.Err(), s.thinking.Err())
}

// lineError is an error the server sent in the stream: a model that ran
// out of memory or whose runner died is worth another try, anything else
// is not.
func lineError(msg string) error {
	err := fmt.Errorf("the server reported an error in the stream: %s", msg)
	low := strings.ToLower(msg)
	for _, w := range []string{"timed out", "unexpected eof", "connection reset", "server busy", "try again", "runner process has terminated"} {
		if strings.Contains(low, w) {
			return &sse.Temporary{Err: err}
		}
	}
	return err
}
