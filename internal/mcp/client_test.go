package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pagedServer is a go-sdk server with n tools, two to a tools/list page.
func pagedServer(n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("t%d", i)}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("t%d: %s", i, in.Text)}}}, nil, nil
		})
	}
	return s
}

type seenRequest struct {
	method, session, protocol, accept, custom string
}

func TestStreamableHTTPAgainstTheGoSDKServer(t *testing.T) {
	for _, jsonAnswers := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonAnswers), func(t *testing.T) {
			srv := pagedServer(5)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonAnswers})
			var mu sync.Mutex
			var seen []seenRequest
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, seenRequest{r.Method, r.Header.Get("Mcp-Session-Id"), r.Header.Get("MCP-Protocol-Version"), r.Header.Get("Accept"), r.Header.Get("X-Custom")})
				mu.Unlock()
				h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			m := Open(context.Background(), Options{Servers: []Server{{Name: "web", Type: TypeHTTP, URL: ts.URL, Headers: map[string]string{"X-Custom": "yes"}}}, StartTimeout: 10 * time.Second})
			info := m.Servers()[0]
			if info.State != StateConnected || len(info.Tools) != 5 {
				t.Fatalf("state %s, %d tools (want 5 over three pages): %v", info.State, len(info.Tools), info.Err)
			}
			out, err := m.Call(context.Background(), "web", "t3", json.RawMessage(`{"text":"hi"}`))
			if err != nil || text2(out) != "t3: hi" {
				t.Fatalf("call: %q %v", text2(out), err)
			}
			_ = m.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(seen) < 5 {
				t.Fatalf("requests: %+v", seen)
			}
			for i, r := range seen {
				if r.custom != "yes" {
					t.Errorf("request %d lacks the configured header: %+v", i, r)
				}
				if r.method == http.MethodPost && r.accept != "application/json, text/event-stream" {
					t.Errorf("request %d Accept %q", i, r.accept)
				}
				if i == 0 {
					if r.session != "" || r.protocol != "" {
						t.Errorf("initialize carried session %q, version %q", r.session, r.protocol)
					}
					continue
				}
				if r.session == "" || r.protocol != protocolVersion {
					t.Errorf("request %d after initialize: session %q, version %q (want %s)", i, r.session, r.protocol, protocolVersion)
				}
			}
			if last := seen[len(seen)-1]; last.method != http.MethodDelete {
				t.Errorf("closing sent %s, want DELETE of the session", last.method)
			}
		})
	}
}

func TestServerRequestsAreAnswered(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ping := req.Session.Ping(ctx, nil)
		//lint:ignore SA1019 a server request rein does not offer, sent without the SDK checking capabilities first
		_, roots := req.Session.ListRoots(ctx, nil)
		var code int64
		if werr := (*jsonrpc.Error)(nil); errors.As(roots, &werr) {
			code = werr.Code
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("ping: %v; roots: code %d", ping, code)}}}, nil, nil
	})
	m := inMemory(t, srv, "asks")
	out, err := m.Call(context.Background(), "asks", "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := text2(out)
	if got != "ping: <nil>; roots: code -32601" {
		t.Errorf("the server saw %q; want ping answered and roots/list refused with -32601", got)
	}
}

func TestCancelledCallTellsTheServer(t *testing.T) {
	cancelled := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
			close(cancelled)
		case <-time.After(30 * time.Second):
		}
		return &mcp.CallToolResult{}, nil, nil
	})
	m := inMemory(t, srv, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := m.Call(ctx, "slow", "wait", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call past its deadline: %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's handler was not cancelled: no notifications/cancelled reached it")
	}
}

func TestResultContentTypes(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "1"}, nil)
	png := []byte("\x89PNG fake")
	mcp.AddTool(srv, &mcp.Tool{Name: "all"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
			&mcp.TextContent{Text: "first"},
			&mcp.ImageContent{MIMEType: "image/png", Data: png},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///t.txt", MIMEType: "text/plain", Text: "hello"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
		}}, nil, nil
	})
	m := inMemory(t, srv, "kinds")
	out, err := m.Call(context.Background(), "kinds", "all", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "first\n[audio (audio/wav, 4B) omitted: rein does not pass audio to models]\n[resource link: file:///a.txt (a.txt)]\n[resource file:///t.txt]\nhello\n[resource file:///b.bin (application/octet-stream, 3B of binary data) omitted]"
	if len(out.Content) != 2 || out.Content[0].Text != want {
		t.Fatalf("content %+v\nwant text %q", out.Content, want)
	}
	if img := out.Content[1]; img.MIMEType != "image/png" || string(img.Data) != string(png) {
		t.Errorf("image: %+v", img)
	}
	if !out.IsError || out.Details.Omitted != 2 {
		t.Errorf("isError %v, omitted %d", out.IsError, out.Details.Omitted)
	}
}

// rawServer answers the client's messages over the Transport seam: answer gets each
// request's method and id and returns the lines to write (none: no answer).
func rawServer(t *testing.T, answer func(method string, id json.RawMessage) []string) Options {
	return Options{Servers: []Server{{Name: "raw", Command: "unused"}}, StartTimeout: 5 * time.Second,
		Transport: func(Server) (io.ReadCloser, io.WriteCloser) {
			toClient, fromServer := io.Pipe()
			toServer, fromClient := io.Pipe()
			go func() {
				defer fromServer.Close()
				sc := bufio.NewScanner(toServer)
				for sc.Scan() {
					var m struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
						t.Errorf("the client sent %q: %v", sc.Text(), err)
						return
					}
					for _, l := range answer(m.Method, m.ID) {
						if _, err := io.WriteString(fromServer, l+"\n"); err != nil {
							return
						}
					}
				}
			}()
			return toClient, fromClient
		}}
}

const initAnswer = `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"raw","version":"1"},"x-extension":[1,2]},"extra":true}`

func TestMalformedMessagesAreRefusedNamingTheServer(t *testing.T) {
	cases := map[string]string{
		"not JSON":                `starting server on stdio...`,
		"wrong jsonrpc":           `{"jsonrpc":"1.0","id":1,"result":{}}`,
		"result and error":        `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
		"neither method nor id":   `{"jsonrpc":"2.0","result":{}}`,
		"tools of the wrong type": `{"jsonrpc":"2.0","id":%s,"result":{"tools":{"name":"x"}}}`,
		// Which id or which tools would encoding/json take? The last; another reader the first.
		"a repeated id":             `{"jsonrpc":"2.0","id":%s,"id":77,"result":{"tools":[]}}`,
		"a repeated inner key":      `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","name":"b"}]}}`,
		"a repeated key in a batch": `[{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"tools":[{"name":"x"}]}}]`,
		"not UTF-8":                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"\xff\"}]}}",
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			m := Open(context.Background(), rawServer(t, func(method string, id json.RawMessage) []string {
				switch method {
				case methodInitialize:
					return []string{fmt.Sprintf(initAnswer, id)}
				case methodToolsList:
					if strings.Contains(bad, "%s") {
						return []string{fmt.Sprintf(bad, id)}
					}
					return []string{bad}
				}
				return nil
			}))
			defer m.Close()
			info := m.Servers()[0]
			if info.State != StateFailed || !errors.Is(info.Err, ErrServer) || !errors.Is(info.Err, errMalformed) || !strings.Contains(info.Err.Error(), "raw") {
				t.Fatalf("state %s, error %v; want failed, naming server raw, wrapping errMalformed", info.State, info.Err)
			}
		})
	}
}

func TestUnknownFieldsAndVersions(t *testing.T) {
	version := "2025-06-18"
	answer := func(method string, id json.RawMessage) []string {
		switch method {
		case methodInitialize:
			return []string{strings.Replace(fmt.Sprintf(initAnswer, id), "2025-06-18", version, 1)}
		case methodToolsList:
			return []string{
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`,
				`{"jsonrpc":"2.0","id":999,"result":{}}`, // not an id rein sent: dropped
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{}},"icons":[],"execution":{"x":1}}],"_meta":{}}}`, id),
			}
		}
		return nil
	}
	m := Open(context.Background(), rawServer(t, answer))
	if info := m.Servers()[0]; info.State != StateConnected || len(info.Tools) != 1 {
		t.Fatalf("unknown fields were not tolerated: %s %v %+v", info.State, info.Err, info.Tools)
	}
	_ = m.Close()
	version = "1999-01-01"
	m = Open(context.Background(), rawServer(t, answer))
	defer m.Close()
	if info := m.Servers()[0]; info.State != StateFailed || !strings.Contains(fmt.Sprint(info.Err), `"1999-01-01"`) {
		t.Fatalf("an unknown protocol version: %s %v", info.State, info.Err)
	}
}

// TestAnswerStreamIsResumed: an answer stream cut after a numbered event is resumed once
// with Last-Event-ID; one cut without an event id fails the call instead of hanging it.
func TestAnswerStreamIsResumed(t *testing.T) {
	var mu sync.Mutex
	var lastIDs []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		if r.Method == http.MethodGet {
			mu.Lock()
			lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"late\"}]}}\n\n")
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		switch m.Method {
		case methodInitialize:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, initAnswer, m.ID)
		case methodToolsList:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": keep-alive\n\nid: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"p1\"}\n\n")
		case methodToolsCall:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer ts.Close()
	m := Open(context.Background(), Options{Servers: []Server{{Name: "cut", Type: TypeHTTP, URL: ts.URL}}, StartTimeout: 10 * time.Second})
	defer m.Close()
	info := m.Servers()[0]
	if info.State != StateConnected || len(info.Tools) != 1 || info.Tools[0].MCPName != "late" {
		t.Fatalf("state %s %v, tools %+v", info.State, info.Err, info.Tools)
	}
	mu.Lock()
	if len(lastIDs) != 1 || lastIDs[0] != "1" {
		t.Errorf("resumptions: %q, want one with Last-Event-ID 1", lastIDs)
	}
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Call(ctx, "cut", "late", nil); err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "ended before the answer") {
		t.Fatalf("a stream cut without an event id: %v (context %v)", err, ctx.Err())
	}
}

func TestHTTPSessionTheServerEndedIsStartedAgain(t *testing.T) {
	srv := pagedServer(1)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	forget := false
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		f := forget && r.Header.Get("Mcp-Session-Id") != ""
		forget = forget && !f
		mu.Unlock()
		if f {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	m := Open(context.Background(), Options{Servers: []Server{{Name: "web", Type: TypeHTTP, URL: ts.URL}}, StartTimeout: 10 * time.Second})
	defer m.Close()
	mu.Lock()
	forget = true
	mu.Unlock()
	if _, err := m.Call(context.Background(), "web", "t0", json.RawMessage(`{"text":"a"}`)); err == nil || !strings.Contains(err.Error(), "ended the session") {
		t.Fatalf("a call to a session the server ended: %v", err)
	}
	if st := m.Servers()[0].State; st != StateCrashed {
		t.Errorf("state: %s, want %s", st, StateCrashed)
	}
	out, err := m.Call(context.Background(), "web", "t0", json.RawMessage(`{"text":"b"}`))
	if err != nil || text2(out) != "t0: b" {
		t.Fatalf("the call after: %q %v", text2(out), err)
	}
}

func TestOverlongLineEndsTheConnection(t *testing.T) {
	m := Open(context.Background(), rawServer(t, func(method string, id json.RawMessage) []string {
		if method == methodInitialize {
			return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"x":"` + strings.Repeat("x", maxMessage) + `"}}`}
		}
		return nil
	}))
	defer m.Close()
	if info := m.Servers()[0]; info.State != StateFailed || !errors.Is(info.Err, errMalformed) || !strings.Contains(info.Err.Error(), "longer than 32 MiB") {
		t.Fatalf("a 32 MiB line: %s %v", info.State, info.Err)
	}
}

func TestServerThatStopsReadingDoesNotHoldACall(t *testing.T) {
	m := Open(context.Background(), Options{Servers: []Server{{Name: "deaf", Command: "unused"}}, StartTimeout: 5 * time.Second,
		Transport: func(Server) (io.ReadCloser, io.WriteCloser) {
			toClient, fromServer := io.Pipe()
			toServer, fromClient := io.Pipe()
			go func() {
				sc := bufio.NewScanner(toServer)
				for sc.Scan() {
					var m struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					_ = json.Unmarshal(sc.Bytes(), &m)
					switch m.Method {
					case methodInitialize:
						fmt.Fprintf(fromServer, initAnswer+"\n", m.ID)
					case methodToolsList:
						fmt.Fprintf(fromServer, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"x"}]}}`+"\n", m.ID)
						return // reads nothing more: the next write blocks
					}
				}
			}()
			return toClient, fromClient
		}})
	defer m.Close()
	if st := m.Servers()[0]; st.State != StateConnected {
		t.Fatalf("%s %v", st.State, st.Err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// Before the write gave up with its context, this call never returned.
	if _, err := m.Call(ctx, "deaf", "x", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call to a server that stopped reading: %v", err)
	}
}

// TestOversizeHTTPAnswerEndsTheConnection: an answer past maxMessage — one event of many data
// lines, none of them too long, or a JSON body — ends the connection rather than failing only
// the call (a numbered event is not resumed), and nothing past the limit is read into memory.
func TestOversizeHTTPAnswerEndsTheConnection(t *testing.T) {
	for _, stream := range []bool{true, false} {
		var mu sync.Mutex
		gets := 0
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Mcp-Session-Id", "s1")
			if r.Method == http.MethodGet {
				mu.Lock()
				gets++
				mu.Unlock()
				http.Error(w, "no", http.StatusMethodNotAllowed)
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			body, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(body, &m)
			switch m.Method {
			case methodInitialize:
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, initAnswer, m.ID)
			case methodToolsList:
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"big"}]}}`, m.ID)
			case methodToolsCall:
				chunk := strings.Repeat("x", 64<<10)
				if !stream {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"x":"`, m.ID)
					for i := 0; i < (maxMessage>>16)+8; i++ {
						fmt.Fprint(w, chunk)
					}
					fmt.Fprint(w, `"}}`)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "id: 7\n")
				for i := 0; i < (maxMessage>>16)+8; i++ {
					fmt.Fprintf(w, "data: %s\n", chunk)
				}
				fmt.Fprint(w, "\n")
			default:
				w.WriteHeader(http.StatusAccepted)
			}
		}))
		m := Open(context.Background(), Options{Servers: []Server{{Name: "big", Type: TypeHTTP, URL: ts.URL}}, StartTimeout: 10 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := m.Call(ctx, "big", "big", nil)
		if err == nil || ctx.Err() != nil || !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), "longer than 32 MiB") {
			t.Errorf("stream %v: an answer over 32 MiB: %v (context %v)", stream, err, ctx.Err())
		}
		if st := m.Servers()[0].State; st == StateConnected {
			t.Errorf("stream %v: the connection outlived an oversize answer (state %s)", stream, st)
		}
		mu.Lock()
		if gets != 0 {
			t.Errorf("stream %v: an oversize event was resumed (%d GETs)", stream, gets)
		}
		mu.Unlock()
		cancel()
		_ = m.Close()
		ts.Close()
	}
}
