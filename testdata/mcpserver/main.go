// Command mcpserver is a small MCP server for coda's tests, on the official
// Go SDK's server side. It speaks stdio, or streamable HTTP with -http ADDR
// (it then prints its URL on stdout). Tools:
//
//	echo {text}      "Echo: TEXT" (read-only)
//	block {started}  writes a line to the FIFO started, then waits until the call is cancelled
//	cancelled {}     waits until a block call was cancelled, then says how many were
//	fail {}          an error result
//	mixed {}         text, an image and a resource link
//	env {name}       the value of an environment variable, or "(unset)"
//	spawn {}         starts a long sleep in the background; says its pid
//	read {path}      the file's text (read-only; a path relative to its directory)
//	grow {name}      adds a tool NAME {text} that answers "NAME: TEXT" (the list changes)
//	crash {}         exits with status 3
//	big {bytes}      a text of that many bytes ("aaa…")
//
// The environment steers its start: CODA_MCP_PIDFILE gets its pid;
// CODA_MCP_GATE names a FIFO it reads a line from before it serves (a start
// as slow as the test wants); CODA_MCP_FAIL makes it print that to stderr
// and exit 1 instead of serving; CODA_MCP_TOOLS=N adds N tools t00000…
// (each with a description of CODA_MCP_TOOL_DESC bytes); CODA_MCP_IGNORE_EOF
// keeps it running after its stdin ends, as some servers do;
// CODA_MCP_CHILD_PIDFILE makes it start a child in its process group that
// ignores its stdin's end too (a server's helper), and gets its pid.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	if msg := os.Getenv("CODA_MCP_FAIL"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
	if p := os.Getenv("CODA_MCP_PIDFILE"); p != "" {
		if err := os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if os.Getenv("CODA_MCP_CHILD") != "" {
		select {} // the child: until killed
	}
	if p := os.Getenv("CODA_MCP_CHILD_PIDFILE"); p != "" {
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "CODA_MCP_CHILD=1", "CODA_MCP_CHILD_PIDFILE=")
		if err := child.Start(); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if gate := os.Getenv("CODA_MCP_GATE"); gate != "" {
		f, err := os.Open(gate) // a FIFO: blocks until the test opens it to write
		if err != nil {
			log.Fatal(err)
		}
		_, _ = bufio.NewReader(f).ReadString('\n')
		f.Close()
	}
	server := New()
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("http://%s\n", ln.Addr())
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		log.Fatal(http.Serve(ln, h))
	}
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
	if os.Getenv("CODA_MCP_IGNORE_EOF") != "" {
		select {} // until killed
	}
}

// New is the server with its tools.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "coda-test", Version: "1"}, nil)
	var cancelled atomic.Int32
	firstCancel := make(chan struct{})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the text back", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + a.Text), nil, nil
		})
	type none struct{}
	type blockArgs struct {
		Started string `json:"started,omitempty" jsonschema:"a FIFO told when the call has begun"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Waits until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, a blockArgs) (*mcp.CallToolResult, any, error) {
			if a.Started != "" {
				if err := os.WriteFile(a.Started, []byte("started\n"), 0); err != nil {
					return nil, nil, err
				}
			}
			<-ctx.Done()
			if cancelled.Add(1) == 1 {
				close(firstCancel)
			}
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "cancelled", Description: "Waits until a block call was cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			hang := time.NewTimer(time.Minute) // a hang detector only
			defer hang.Stop()
			select {
			case <-firstCancel:
			case <-hang.C:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return text(fmt.Sprintf("cancelled: %d", cancelled.Load())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			r := text("it failed on purpose")
			r.IsError = true
			return r, nil, nil
		})
	png := []byte("\x89PNG\r\n\x1a\n" + string(make([]byte, 2040)))
	mcp.AddTool(s, &mcp.Tool{Name: "mixed", Description: "Text, an image and a link"},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a chart:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: png},
				&mcp.ResourceLink{URI: "file:///tmp/chart.png", Name: "chart"},
			}}, nil, nil
		})
	type envArgs struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "An environment variable's value"},
		func(_ context.Context, _ *mcp.CallToolRequest, a envArgs) (*mcp.CallToolResult, any, error) {
			v, ok := os.LookupEnv(a.Name)
			if !ok {
				v = "(unset)"
			}
			return text(v), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Starts a background sleep"},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "1000")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
		})
	type readArgs struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "A file's text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a readArgs) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	type growArgs struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool NAME that echoes"},
		func(_ context.Context, _ *mcp.CallToolRequest, a growArgs) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: a.Name, Description: "Echoes, added by grow"},
				func(_ context.Context, _ *mcp.CallToolRequest, e echoArgs) (*mcp.CallToolResult, any, error) {
					return text(a.Name + ": " + e.Text), nil, nil
				})
			return text("added " + a.Name), nil, nil
		})
	type bigArgs struct {
		Bytes int `json:"bytes"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "A text of that many bytes"},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("a", a.Bytes)), nil, nil
		})
	if n, _ := strconv.Atoi(os.Getenv("CODA_MCP_TOOLS")); n > 0 {
		descBytes, _ := strconv.Atoi(os.Getenv("CODA_MCP_TOOL_DESC"))
		desc := "Echoes" + strings.Repeat(".", descBytes)
		for i := range n {
			name := fmt.Sprintf("t%05d", i)
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc},
				func(_ context.Context, _ *mcp.CallToolRequest, e echoArgs) (*mcp.CallToolResult, any, error) {
					return text(name + ": " + e.Text), nil, nil
				})
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits"},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}
