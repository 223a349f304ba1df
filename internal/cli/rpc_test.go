package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/cli"
)

// rpcProc is a real `rein --mode rpc` process (the test binary re-executed as rein, see
// TestMain) with its stdin and stdout.
type rpcProc struct {
	t      *testing.T
	dir    string
	home   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	mu     sync.Mutex
	seen   []string // every stdout line so far
	stderr strings.Builder
}

// line is one decoded stdout line.
type line map[string]any

func (l line) str(key string) string { s, _ := l[key].(string); return s }
func (l line) obj(key string) line   { m, _ := l[key].(map[string]any); return m }

// startRPC starts rein --mode rpc in dir with a scenario and extra flags.
func startRPC(t *testing.T, dir, scenario string, args ...string) *rpcProc {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, ".rein-home")
	return startRPCIn(t, dir, home, append([]string{"--mode", "rpc", "--script", "s.yaml"}, args...)...)
}

func startRPCIn(t *testing.T, dir, home string, args ...string) *rpcProc {
	t.Helper()
	p := &rpcProc{t: t, dir: dir, home: home, lines: make(chan string, 1024)}
	p.cmd = exec.Command("rein", args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "REIN_HOME="+home, "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, b: &p.stderr}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		r := bufio.NewReader(stdout)
		for {
			s, err := r.ReadString('\n')
			if s != "" {
				p.lines <- s
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (p *rpcProc) send(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, s+"\n"); err != nil {
		p.t.Fatalf("writing %q: %v", s, err)
	}
}

// failsafe bounds a wait for output so that a broken build fails instead of hanging; nothing
// is asserted about speed.
const failsafe = 2 * time.Minute

// next returns the next stdout line, which must be one JSON object of schema version 2 ending
// in "\n".
func (p *rpcProc) next() line {
	p.t.Helper()
	select {
	case s, ok := <-p.lines:
		if !ok {
			p.fatalf("stdout ended")
		}
		p.mu.Lock()
		p.seen = append(p.seen, strings.TrimSuffix(s, "\n"))
		p.mu.Unlock()
		if !strings.HasSuffix(s, "\n") {
			p.fatalf("unterminated line %q", s)
		}
		var l line
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&l); err != nil || dec.More() {
			p.fatalf("not one JSON object: %q (%v)", s, err)
		}
		if v := fmt.Sprint(l["v"]); v != "2" {
			p.fatalf("line without v 2: %s", s)
		}
		return l
	case <-time.After(failsafe):
		p.fatalf("no output within %s", failsafe)
	}
	return nil
}

// until reads lines up to and including the first that match accepts, and returns them all.
func (p *rpcProc) until(match func(line) bool) []line {
	p.t.Helper()
	var out []line
	for {
		l := p.next()
		out = append(out, l)
		if match(l) {
			return out
		}
	}
}

// response reads up to the response with id and returns it and the events before it.
func (p *rpcProc) response(id string) (line, []line) {
	p.t.Helper()
	ls := p.until(func(l line) bool { return l.str("type") == "response" && l.str("id") == id })
	return ls[len(ls)-1], ls[:len(ls)-1]
}

// call sends a command with an id and returns its response, which must succeed.
func (p *rpcProc) call(id, command string) (line, []line) {
	p.t.Helper()
	p.send(command)
	r, before := p.response(id)
	if r["success"] != true {
		p.fatalf("%s failed: %v", command, r["error"])
	}
	return r, before
}

func (p *rpcProc) agentEnd() []line {
	p.t.Helper()
	return p.until(func(l line) bool { return l.str("type") == "agent_end" })
}

// finish closes stdin and returns the exit code once the process has ended.
func (p *rpcProc) finish() int {
	p.t.Helper()
	p.stdin.Close()
	for s := range p.lines {
		p.mu.Lock()
		p.seen = append(p.seen, strings.TrimSuffix(s, "\n"))
		p.mu.Unlock()
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		p.fatalf("wait: %v", err)
	}
	return 0
}

func (p *rpcProc) fatalf(format string, args ...any) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.Fatalf("%s\nstdout so far:\n%s\nstderr:\n%s", fmt.Sprintf(format, args...), strings.Join(p.seen, "\n"), p.stderr.String())
}

// index returns the position of the first line matching, or -1.
func index(ls []line, match func(line) bool) int {
	for i, l := range ls {
		if match(l) {
			return i
		}
	}
	return -1
}

func isType(typ string) func(line) bool { return func(l line) bool { return l.str("type") == typ } }

func userMessage(text string) func(line) bool {
	return func(l line) bool {
		m := l.obj("message")
		if l.str("type") != "message_end" || m.str("role") != "user" {
			return false
		}
		c, _ := m["content"].([]any)
		return len(c) == 1 && line(c[0].(map[string]any)).str("text") == text
	}
}

func turnEvent(typ string, turn int) func(line) bool {
	return func(l line) bool { return l.str("type") == typ && fmt.Sprint(l["turn"]) == fmt.Sprint(turn) }
}

const basicScenario = `version: 1
pricing: {input: 2, output: 8}
dialogs:
  - match: ^list$
    turns:
      - calls: [{name: ls, id: c1, args: {}}]
        usage: {input: 10, output: 5}
      - text: Two files.
        usage: {input: 20, output: 2}
  - turns:
      - text: OK.
`

// A prompt is answered at once, its run streams events, and errors in the input get error
// responses without stopping the server; stdin's end ends the process with 0.
func TestRPCPromptEventsAndErrors(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startRPC(t, dir, basicScenario)

	st, _ := p.call("s1", `{"id":"s1","type":"get_state"}`)
	data := st.obj("data")
	if data["isStreaming"] != false || data.obj("model").str("provider") != "script" || len(data.str("sessionId")) != 32 {
		t.Errorf("get_state: %v", data)
	}

	p.send(`this is not json`)
	if r := p.next(); r.str("command") != "parse" || r["success"] != false || !strings.Contains(r.str("error"), "malformed command") {
		t.Errorf("malformed line: %v", r)
	}
	p.send(`{"id":"u1","type":"frobnicate"}`)
	if r := p.next(); r.str("id") != "u1" || r.str("command") != "frobnicate" || r["success"] != false || !strings.Contains(r.str("error"), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %v", r)
	}
	p.send(`{"id":"d1","type":"get_state","type":"prompt"}`)
	if r := p.next(); r.str("command") != "parse" || !strings.Contains(r.str("error"), "duplicate") {
		t.Errorf("duplicate key: %v", r)
	}
	p.send(`{"id":"f1","type":"prompt","message":"list","Message":"x"}`)
	if r := p.next(); r.str("id") != "f1" || r.str("command") != "prompt" || r["success"] != false || !strings.Contains(r.str("error"), "unknown field") {
		t.Errorf("unknown field: %v", r)
	}
	p.send(`{"id":7,"type":"get_state"}`)
	if r := p.next(); r.str("command") != "parse" || !strings.Contains(r.str("error"), "id must be a string") {
		t.Errorf("numeric id: %v", r)
	}
	p.send(`[1,2]`)
	if r := p.next(); r.str("command") != "parse" || r["success"] != false {
		t.Errorf("array: %v", r)
	}
	p.send("") // a blank line is ignored
	p.send("{\"id\":\"crlf\",\"type\":\"get_last_assistant_text\"}\r")
	if r := p.next(); r.str("id") != "crlf" || r["success"] != true || r.obj("data")["text"] != nil {
		t.Errorf("CRLF line: %v", r)
	}

	r, before := p.call("p1", `{"id":"p1","type":"prompt","message":"list"}`)
	if len(before) != 0 || r.obj("data")["started"] != true {
		t.Errorf("prompt response %v after %d lines", r, len(before))
	}
	events := p.agentEnd()
	if events[0].str("type") != "agent_start" {
		t.Errorf("first event %v", events[0])
	}
	for _, typ := range []string{"turn_start", "message_start", "message_update", "message_end", "tool_start", "tool_end", "turn_end", "session_write"} {
		if index(events, isType(typ)) < 0 {
			t.Errorf("no %s event", typ)
		}
	}
	for _, e := range events {
		if e.str("type") == "message_update" && e["message"] != nil {
			t.Errorf("message_update with a whole message: %v", e)
		}
		if e["id"] != nil {
			t.Errorf("event with an id: %v", e)
		}
	}
	end := events[len(events)-1].obj("outcome")
	if end.str("status") != "completed" || fmt.Sprint(end["turns"]) != "2" {
		t.Errorf("agent_end %v", end)
	}

	msgs, _ := p.call("m1", `{"id":"m1","type":"get_messages"}`)
	list, _ := msgs.obj("data")["messages"].([]any)
	var roles []string
	for _, m := range list {
		mm := line(m.(map[string]any))
		roles = append(roles, mm.str("role"))
		if len(mm.str("id")) != 32 {
			t.Errorf("message without its entry id: %v", mm)
		}
	}
	if strings.Join(roles, ",") != "user,assistant,tool,assistant" {
		t.Errorf("get_messages roles %v", roles)
	}
	text, _ := p.call("t1", `{"id":"t1","type":"get_last_assistant_text"}`)
	if text.obj("data").str("text") != "Two files." {
		t.Errorf("last text %v", text)
	}
	stats, _ := p.call("st", `{"id":"st","type":"get_session_stats"}`)
	sd := stats.obj("data")
	if fmt.Sprintf("%v %v %v %v", sd["toolCalls"], sd["toolResults"], sd["totalMessages"], sd.obj("usage")["costUsd"]) != "1 1 4 0.000116" {
		t.Errorf("stats %v", sd)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d; stderr: %s", code, p.stderr.String())
	}
}

const steerScenario = `version: 1
dialogs:
  - match: ^go$
    turns:
      - calls: [{name: bash, id: b1, args: {command: "touch started; while [ ! -f release ]; do sleep 0.02; done; echo tool done"}}]
      - text: Finished the tool.
  - match: ^change course$
    turns:
      - text: Steered.
  - match: ^and then$
    turns:
      - text: Followed up.
`

// A steer sent while a tool runs is delivered after the turn's tool batch; a follow-up only
// once the model would stop. Both are recorded as user entries.
func TestRPCSteerAndFollowUpDuringATool(t *testing.T) {
	dir := t.TempDir()
	p := startRPC(t, dir, steerScenario)
	p.call("p", `{"id":"p","type":"prompt","message":"go"}`)
	p.until(isType("tool_start"))
	q, _ := p.call("s", `{"id":"s","type":"steer","message":"change course"}`)
	if q.obj("data").str("queued") != "steer" {
		t.Errorf("steer response %v", q)
	}
	f, _ := p.call("f", `{"id":"f","type":"follow_up","message":"and then"}`)
	if d := f.obj("data"); d.str("queued") != "follow_up" || fmt.Sprint(d["pending"]) != "2" {
		t.Errorf("follow_up response %v", f)
	}
	st, _ := p.call("st", `{"id":"st","type":"get_state"}`)
	if d := st.obj("data"); d["isStreaming"] != true || fmt.Sprint(d["pendingMessageCount"]) != "2" {
		t.Errorf("state during the run: %v", d)
	}
	p.send(`{"id":"busy","type":"prompt","message":"again"}`)
	if r, _ := p.response("busy"); r["success"] != false || !strings.Contains(r.str("error"), "run is in progress") {
		t.Errorf("prompt during a run: %v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	events := p.agentEnd()

	toolEnd := index(events, isType("tool_end"))
	turn1End := index(events, turnEvent("turn_end", 1))
	steer := index(events, userMessage("change course"))
	turn2 := index(events, turnEvent("turn_start", 2))
	turn2End := index(events, turnEvent("turn_end", 2))
	follow := index(events, userMessage("and then"))
	turn3 := index(events, turnEvent("turn_start", 3))
	if !(toolEnd >= 0 && toolEnd < turn1End && turn1End < steer && steer < turn2 && turn2 < turn2End && turn2End < follow && follow < turn3) {
		t.Errorf("order: tool_end %d, turn_end 1 %d, steer %d, turn_start 2 %d, turn_end 2 %d, follow-up %d, turn_start 3 %d",
			toolEnd, turn1End, steer, turn2, turn2End, follow, turn3)
	}
	if index(events, isType("queue_update")) < 0 {
		t.Error("no queue_update while the queue was consumed")
	}
	if end := events[len(events)-1].obj("outcome"); end.str("status") != "completed" || fmt.Sprint(end["turns"]) != "3" {
		t.Errorf("agent_end %v", end)
	}
	text, _ := p.call("t", `{"id":"t","type":"get_last_assistant_text"}`)
	if text.obj("data").str("text") != "Followed up." {
		t.Errorf("last text %v", text)
	}
	msgs, _ := p.call("m", `{"id":"m","type":"get_messages"}`)
	list, _ := msgs.obj("data")["messages"].([]any)
	var texts []string
	for _, m := range list {
		mm := line(m.(map[string]any))
		if mm.str("role") == "user" {
			c, _ := mm["content"].([]any)
			texts = append(texts, line(c[0].(map[string]any)).str("text"))
		}
	}
	if strings.Join(texts, "|") != "go|change course|and then" {
		t.Errorf("recorded user messages %q", texts)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// A steer or follow-up sent while nothing runs starts a run, like a prompt.
func TestRPCSteerWhenIdleStartsARun(t *testing.T) {
	p := startRPC(t, t.TempDir(), basicScenario, "--no-session")
	r, _ := p.call("s", `{"id":"s","type":"follow_up","message":"hello"}`)
	if r.obj("data")["started"] != true {
		t.Errorf("follow_up when idle: %v", r)
	}
	events := p.agentEnd()
	if index(events, userMessage("hello")) < 0 {
		t.Error("the message did not start the run")
	}
	// Without a session the conversation is kept in memory across runs.
	p.call("p", `{"id":"p","type":"prompt","message":"more"}`)
	p.agentEnd()
	st, _ := p.call("st", `{"id":"st","type":"get_state"}`)
	if d := st.obj("data"); fmt.Sprint(d["messageCount"]) != "4" || d["sessionId"] != nil {
		t.Errorf("state %v", d)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// abort during a tool records the cancellation in the session before the tool's result,
// ends the run as aborted, answers after agent_end, and leaves the server running.
func TestRPCAbortMidTool(t *testing.T) {
	dir := t.TempDir()
	p := startRPC(t, dir, `version: 1
dialogs:
  - match: ^hang$
    turns:
      - calls: [{name: bash, id: h1, args: {command: "touch started; sleep 60"}}]
      - text: never
  - turns: [{text: Still here.}]
`)
	st, _ := p.call("st", `{"id":"st","type":"get_state"}`)
	ledger := filepath.Join(st.obj("data").str("sessionDir"), "ledger.jsonl")
	p.call("p", `{"id":"p","type":"prompt","message":"hang"}`)
	p.until(isType("tool_start"))
	for { // the tool's process runs; asserting what happens, not how fast
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.send(`{"id":"a","type":"abort"}`)
	r, before := p.response("a")
	if r["success"] != true || r.obj("data")["aborted"] != true {
		t.Errorf("abort response %v", r)
	}
	end := index(before, isType("agent_end"))
	if end < 0 || before[end].obj("outcome").str("status") != "aborted" {
		t.Fatalf("no aborted agent_end before the abort response")
	}
	if te := index(before, isType("tool_end")); te < 0 || !strings.Contains(fmt.Sprint(before[te].obj("message")), "aborted") {
		t.Errorf("tool_end: %v", before)
	}
	data, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	cancelAt, resultAt := strings.Index(text, `"kind":"cancel"`), strings.Index(text, `"toolCallId":"h1"`)
	if cancelAt < 0 || resultAt < 0 || cancelAt > resultAt {
		t.Errorf("the cancel record (at %d) must precede the tool's result (at %d)", cancelAt, resultAt)
	}
	// Nothing runs now; abort again is a no-op, and the server takes the next prompt.
	if r, _ := p.call("a2", `{"id":"a2","type":"abort"}`); r.obj("data")["aborted"] != false {
		t.Errorf("second abort %v", r)
	}
	p.call("p2", `{"id":"p2","type":"prompt","message":"hello"}`)
	if ev := p.agentEnd(); ev[len(ev)-1].obj("outcome").str("status") != "completed" {
		t.Errorf("run after abort: %v", ev[len(ev)-1])
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out, code := runReinIn(t, dir, p.home, "session", "verify", filepath.Dir(ledger)); code != 0 {
		t.Errorf("verify after abort: exit %d: %s", code, out)
	}
}

// runReinIn runs rein to completion and returns its combined output and exit code.
func runReinIn(t *testing.T, dir, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("rein", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REIN_HOME="+home)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// At the end of stdin the server waits for the run in progress, then exits.
func TestRPCEOFWaitsForTheRun(t *testing.T) {
	dir := t.TempDir()
	p := startRPC(t, dir, `version: 1
turns:
  - calls: [{name: bash, id: w1, args: {command: "while [ ! -f release ]; do sleep 0.02; done; echo released"}}]
  - text: Released.
`)
	p.call("p", `{"id":"p","type":"prompt","message":"wait"}`)
	p.until(isType("tool_start"))
	p.stdin.Close()
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ev := p.agentEnd()
	if ev[len(ev)-1].obj("outcome").str("status") != "completed" {
		t.Errorf("agent_end %v", ev[len(ev)-1])
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// compact summarizes the session's older part with the model and answers with the summary;
// new_session starts an empty session and fork copies one up to an entry.
func TestRPCCompactNewSessionAndFork(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("notes ", 16000) // ~24k estimated tokens: more than compaction keeps
	scenario := fmt.Sprintf(`version: 1
dialogs:
  - match: "<conversation>"
    turns: [{text: "## Goal\nmake notes"}]
  - match: ^second$
    turns: [{text: Second answer.}]
  - turns:
      - calls: [{name: write, id: w1, args: {path: notes.txt, content: %q}}]
      - text: Notes written.
`, big)
	p := startRPC(t, dir, scenario)

	p.send(`{"id":"c0","type":"compact"}`)
	if r, _ := p.response("c0"); r["success"] != false {
		t.Errorf("compacting an empty session: %v", r)
	}
	p.call("p", `{"id":"p","type":"prompt","message":"make notes"}`)
	p.agentEnd()
	st, _ := p.call("st", `{"id":"st","type":"get_state"}`)
	first := st.obj("data").str("sessionId")

	c, events := p.call("c", `{"id":"c","type":"compact","customInstructions":"focus on the notes"}`)
	d := c.obj("data")
	if !strings.Contains(d.str("summary"), "## Goal") || fmt.Sprint(d["messagesBefore"]) != "4" || len(d.str("firstKeptEntryId")) != 32 {
		t.Errorf("compact: %v", d)
	}
	if i := index(events, isType("compaction")); i < 0 || events[i].obj("compaction").str("firstKeptId") != d.str("firstKeptEntryId") {
		t.Errorf("compaction event: %v", events)
	}

	msgs, _ := p.call("m", `{"id":"m","type":"get_messages"}`)
	list, _ := msgs.obj("data")["messages"].([]any)
	var assistant string
	for _, m := range list {
		if mm := line(m.(map[string]any)); mm.str("role") == "assistant" && assistant == "" {
			assistant = mm.str("id")
		}
	}

	n, _ := p.call("n", `{"id":"n","type":"new_session"}`)
	nd := n.obj("data")
	if nd.str("previousSessionId") != first || nd.str("sessionId") == first || len(nd.str("sessionId")) != 32 {
		t.Errorf("new_session %v", nd)
	}
	if st, _ := p.call("st2", `{"id":"st2","type":"get_state"}`); fmt.Sprint(st.obj("data")["messageCount"]) != "0" {
		t.Errorf("the new session is not empty: %v", st)
	}
	p.send(`{"id":"fx","type":"fork","entryId":"nope"}`)
	if r, _ := p.response("fx"); r["success"] != false {
		t.Errorf("fork of an empty session at a missing entry: %v", r)
	}

	// Back to the first session's transcript: fork it at its first assistant entry.
	p.finish()
	q := startRPCIn(t, dir, p.home, "--mode", "rpc", "--script", "s.yaml", "--resume", first)
	f, _ := q.call("f", fmt.Sprintf(`{"id":"f","type":"fork","entryId":%q}`, assistant))
	fd := f.obj("data")
	if fd.str("parentSessionId") != first || fd.str("sessionId") == first || fd.str("entryId") != assistant {
		t.Errorf("fork %v", fd)
	}
	st3, _ := q.call("st3", `{"id":"st3","type":"get_state"}`)
	if d := st3.obj("data"); d.str("sessionId") != fd.str("sessionId") || fmt.Sprint(d["messageCount"]) != "3" {
		t.Errorf("forked session state %v", d)
	}
	q.call("p2", `{"id":"p2","type":"prompt","message":"second"}`)
	if ev := q.agentEnd(); ev[len(ev)-1].obj("outcome").str("status") != "completed" {
		t.Errorf("run in the fork: %v", ev[len(ev)-1])
	}
	if code := q.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// set_model reopens the session with another model; a model that cannot be built is an error
// response and the previous one stays.
func TestRPCSetModel(t *testing.T) {
	p := startRPC(t, t.TempDir(), basicScenario)
	r, _ := p.call("m", `{"id":"m","type":"set_model","provider":"script","modelId":"script-two"}`)
	if d := r.obj("data"); d.str("provider") != "script" {
		t.Errorf("set_model %v", d)
	}
	p.send(`{"id":"bad","type":"set_model","provider":"nonesuch","modelId":"x"}`)
	if r, _ := p.response("bad"); r["success"] != false || !strings.Contains(r.str("error"), "nonesuch") {
		t.Errorf("bad set_model: %v", r)
	}
	p.call("p", `{"id":"p","type":"prompt","message":"hi"}`)
	if ev := p.agentEnd(); ev[len(ev)-1].obj("outcome").str("status") != "completed" {
		t.Errorf("run after set_model: %v", ev[len(ev)-1])
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Prompt arguments and a failing configuration are usage errors before any line is read.
func TestRPCStartErrors(t *testing.T) {
	dir := t.TempDir()
	if out, code := runReinIn(t, dir, filepath.Join(dir, "home"), "--mode", "rpc", "hello"); code != 2 || !strings.Contains(out, "--mode rpc takes its prompts on stdin") {
		t.Errorf("exit %d: %s", code, out)
	}
	if out, code := runReinIn(t, dir, filepath.Join(dir, "home"), "--mode", "rpc", "--provider", "nonesuch"); code != 2 {
		t.Errorf("exit %d: %s", code, out)
	}
}

// An interrupt (the context of Main, cancelled by SIGINT or SIGTERM in the real binary) while
// a tool runs records the cancellation, aborts the run and exits 130.
func TestRPCInterrupt(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(dir, "home")
	t.Setenv("REIN_HOME", home)
	scenario := "version: 1\nturns:\n  - calls: [{name: bash, id: b1, args: {command: \"touch started; sleep 30\"}}]\n  - text: never\n"
	if err := os.WriteFile("s.yaml", []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for { // wait until the tool runs; the test asserts what happens, not how fast
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	stdin, feed := io.Pipe()
	defer feed.Close()
	go io.WriteString(feed, `{"type":"prompt","message":"go"}`+"\n")
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, []string{"--mode", "rpc", "--script", "s.yaml"}, stdin, &stdout, &stderr)
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr: %s", code, cli.ExitInterrupted, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"type":"agent_end","outcome":{"status":"aborted"`) {
		t.Errorf("no aborted agent_end:\n%s", stdout.String())
	}
	ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
	if len(ledgers) != 1 {
		t.Fatalf("found %d session ledgers", len(ledgers))
	}
	data, _ := os.ReadFile(ledgers[0])
	text := string(data)
	cancelAt, resultAt := strings.Index(text, `"kind":"cancel"`), strings.Index(text, `"toolCallId":"b1"`)
	if cancelAt < 0 || resultAt < 0 || cancelAt > resultAt {
		t.Errorf("the cancel record (at %d) must precede the tool's result (at %d)", cancelAt, resultAt)
	}
}
