package loop

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agentspec"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/system"
)

// holdRound makes round n's model wait, once its first request arrived (entered), until
// release is closed.
func (f *fixture) holdRound(n int) (entered <-chan struct{}, release chan struct{}) {
	in, rel := make(chan struct{}), make(chan struct{})
	ag := f.env.Agents.(*system.Agents)
	inner := ag.NewModel
	var once sync.Once
	ag.NewModel = func(ws string, m agentspec.Model) (llm.Model, error) {
		mod, err := inner(ws, m)
		if err != nil {
			return nil, err
		}
		return llm.ModelFunc(func(ctx context.Context, req *llm.Request, emit func(llm.Event)) *llm.Message {
			if len(req.Messages) == 1 && strings.Contains(textOf(req.Messages[0]), fmt.Sprintf("%s %d of loop", RequestPrefix, n)) {
				once.Do(func() { close(in) })
				select {
				case <-rel:
				case <-ctx.Done():
				}
			}
			return mod.Stream(ctx, req, emit)
		}), nil
	}
	return in, rel
}

func sha256Sum(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }

// serve runs Serve in the background; ready gives what it serves, result its end.
func (f *fixture) serve(id string, o ServeOptions) (ready <-chan Serving, result <-chan served, stop func()) {
	rd, res := make(chan Serving, 1), make(chan served, 1)
	ctx, cancel := context.WithCancel(context.Background())
	o.Ready = func(s Serving) { rd <- s }
	go func() {
		st, err := Serve(ctx, f.env, id, o)
		res <- served{st, err}
	}()
	f.t.Cleanup(cancel)
	return rd, res, cancel
}

func waitReady(t *testing.T, ready <-chan Serving, result <-chan served) Serving {
	t.Helper()
	select {
	case s := <-ready:
		return s
	case r := <-result:
		t.Fatalf("serve ended before it was ready: %s, %v", r.state, r.err)
	}
	return Serving{}
}

func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func readToken(t *testing.T, file string) string {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %s, want 0600", fi.Mode())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func dispositions(fs []Firing) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+":"+f.Disposition)
	}
	return out
}

// TestServeQueuesOnce: while round 1 is held open, three webhook firings queue exactly one
// more round (the first queued, the rest coalesced into it), as the ledger records.
func TestServeQueuesOnce(t *testing.T) {
	f := newFixture(t, contractYAML(nil),
		round{calls: write("answer.txt", "41"), claim: "done", report: "try 1"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"},
		round{calls: write("answer.txt", "43"), claim: "done", report: "a third round must never run"})
	entered, release := f.holdRound(1)
	id := f.start()
	ready, result, _ := f.serve(id, ServeOptions{Listen: "127.0.0.1:0"})
	s := waitReady(t, ready, result)
	tok := readToken(t, s.TokenFile)
	if rep, err := Status(f.env, id); err != nil || rep.State != StateReady || !strings.Contains(rep.Next, "served by rein loop serve") {
		t.Fatalf("status of a served loop between rounds: %+v, %v", rep, err)
	}
	if code, body := post(t, s.Webhook, tok, `{"note": "ci build 7"}`); code != http.StatusAccepted || !strings.Contains(body, `"run"`) {
		t.Fatalf("first firing: %d %s", code, body)
	}
	<-entered // round 1 runs, held open
	if rep, _ := Status(f.env, id); rep.State != StateRunning {
		t.Fatalf("status while a served round runs: %s", rep.State)
	}
	want := []string{FiringQueued, FiringCoalesced, FiringCoalesced}
	for i, d := range want {
		if code, body := post(t, s.Webhook, tok, ""); code != http.StatusAccepted || !strings.Contains(body, `"`+d+`"`) {
			t.Fatalf("firing %d while round 1 runs: %d %s, want %s", i+2, code, body, d)
		}
	}
	close(release)
	r := <-result
	if r.err != nil || r.state != StateCompleted {
		t.Fatalf("serve ended %s, %v; want completed", r.state, r.err)
	}
	fs := firings(t, f.env.Home, id)
	if got := dispositions(fs); !slices.Equal(got, []string{"webhook:run", "webhook:queued", "webhook:coalesced", "webhook:coalesced"}) {
		t.Fatalf("firings %v", got)
	}
	if fs[0].Note != "ci build 7" || !strings.HasPrefix(fs[0].Source, "127.0.0.1:") || fs[0].At.IsZero() {
		t.Errorf("first firing %+v: want its note, the remote address and its time", fs[0])
	}
	ks := strings.Join(kinds(t, f.env.Home, id), " ")
	if strings.Count(ks, KindRoundStart) != 2 {
		t.Fatalf("kinds %s: four firings, one during no round, want exactly two rounds", ks)
	}
	// round 1 starts after its firing; the three later firings are recorded while it runs;
	// round 2 starts from the queue, with no firing of its own (each round after its resume steps).
	if !strings.Contains(ks, "loop.trigger loop.resumed round.started loop.trigger loop.trigger loop.trigger loop.checkpoint round.ended loop.resumed round.started") {
		t.Fatalf("kinds %s: want the queued round right after round 1's end", ks)
	}
	if data, _ := os.ReadFile(filepath.Join(f.ws, "answer.txt")); string(data) != "42" {
		t.Fatalf("answer.txt %q: a third round ran", data)
	}
}

// TestServeRecordsADroppedFiring: a firing queued while round 1 runs waits for a round that
// ends waiting for a person (its push is held at the gate); serve ends, and the queued firing
// is recorded dropped with why — never left as a queued round that silently never runs.
func TestServeRecordsADroppedFiring(t *testing.T) {
	push := `[{name: bash, args: {command: "git push origin HEAD:refs/heads/main && echo pushed >> pushed.marker"}}]`
	f := newFixture(t, contractYAML(map[string]string{"gate": "[push]"}),
		round{calls: push, claim: "progress", report: "pushed"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "a second round must never run"})
	entered, release := f.holdRound(1)
	id := f.start()
	ready, result, _ := f.serve(id, ServeOptions{Listen: "127.0.0.1:0"})
	s := waitReady(t, ready, result)
	tok := readToken(t, s.TokenFile)
	if code, body := post(t, s.Webhook, tok, ""); code != http.StatusAccepted || !strings.Contains(body, `"run"`) {
		t.Fatalf("first firing: %d %s", code, body)
	}
	<-entered
	if code, body := post(t, s.Webhook, tok, `{"note": "ci build 8"}`); code != http.StatusAccepted || !strings.Contains(body, `"queued"`) {
		t.Fatalf("firing while round 1 runs: %d %s", code, body)
	}
	close(release)
	r := <-result
	if r.err != nil || r.state != StateWaitingForHuman {
		t.Fatalf("serve ended %s, %v; want waiting_for_human", r.state, r.err)
	}
	fs := firings(t, f.env.Home, id)
	if got := dispositions(fs); !slices.Equal(got, []string{"webhook:run", "webhook:queued", "webhook:dropped"}) {
		t.Fatalf("firings %v: the queued firing's fate must be recorded", got)
	}
	if d := fs[2]; d.Source != fs[1].Source || !strings.Contains(d.Reason, StateWaitingForHuman+" ("+ReasonHumanGate+")") || d.At.IsZero() {
		t.Fatalf("dropped firing %+v: want the queued firing's source, its time and why (the round ended waiting_for_human, human_gate)", d)
	}
	ks := strings.Join(kinds(t, f.env.Home, id), " ")
	if strings.Count(ks, KindRoundStart) != 1 || !strings.HasSuffix(ks, KindRoundEnd+" "+KindTrigger) {
		t.Fatalf("kinds %s: want one round, and the drop recorded after its end", ks)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "answer.txt")); err == nil {
		t.Fatal("the dropped round ran")
	}
	rep, err := Status(f.env, id)
	if err != nil || rep.Firings != 2 || rep.LastFiring == nil || rep.LastFiring.Disposition != FiringDropped {
		t.Fatalf("status %+v, %v: want two firings, the last one's fate dropped", rep, err)
	}
}

// TestServeEvery: the schedule fires at once (no round yet), then after one period; each
// firing is recorded with its schedule.
func TestServeEvery(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"trigger": "every 5m"}),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	tick := make(chan struct{})
	var mu sync.Mutex
	var waits []time.Duration
	f.env.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		select {
		case <-tick:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	id := f.start()
	ready, result, _ := f.serve(id, ServeOptions{})
	if s := waitReady(t, ready, result); s.Webhook != "" || s.Trigger.String() != "every 5m" {
		t.Fatalf("serving %+v", s)
	}
	tick <- struct{}{} // the next period is over
	r := <-result
	if r.err != nil || r.state != StateCompleted {
		t.Fatalf("serve ended %s, %v; want completed", r.state, r.err)
	}
	fs := firings(t, f.env.Home, id)
	if len(fs) != 2 || fs[0].Kind != TriggerEvery || fs[0].Source != "every 5m" || fs[0].Disposition != FiringRun || fs[1].Kind != TriggerEvery {
		t.Fatalf("firings %+v", fs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waits) == 0 || waits[0] <= 0 || waits[0] > 5*time.Minute {
		t.Fatalf("waits %v: the second firing must wait for the rest of the period", waits)
	}
}

// TestServeWatch: a write under the watched path fires a round; the round's own writes do
// not fire another; a later outside write does.
func TestServeWatch(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"trigger": "watch src"}),
		round{calls: write("src/gen.txt", "generated"), claim: "progress", report: "try 1"},
		round{calls: write("answer.txt", "42"), claim: "done", report: "fixed"})
	if err := os.MkdirAll(filepath.Join(f.ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	id := f.start()
	rebased := make(chan struct{}, 4)
	ready, result, _ := f.serve(id, ServeOptions{Poll: 5 * time.Millisecond, Debounce: 200 * time.Millisecond,
		onRebase: func() { rebased <- struct{}{} }})
	waitReady(t, ready, result)
	mustWrite(t, filepath.Join(f.ws, ".rein-note"), "outside the watched path")
	mustWrite(t, filepath.Join(f.ws, "src", "a.txt"), "one")
	mustWrite(t, filepath.Join(f.ws, "src", "b.txt"), "two")
	select {
	case <-rebased: // round 1 ended; its write of src/gen.txt is the new baseline
	case r := <-result:
		t.Fatalf("serve ended %s, %v after round 1", r.state, r.err)
	}
	mustWrite(t, filepath.Join(f.ws, "src", "c.txt"), "three")
	r := <-result
	if r.err != nil || r.state != StateCompleted {
		t.Fatalf("serve ended %s, %v; want completed", r.state, r.err)
	}
	fs := firings(t, f.env.Home, id)
	if len(fs) != 2 || !slices.Equal(fs[0].Paths, []string{"src/a.txt", "src/b.txt"}) || !slices.Equal(fs[1].Paths, []string{"src/c.txt"}) {
		t.Fatalf("firings %+v: want src/a.txt src/b.txt, then src/c.txt (never the round's own src/gen.txt)", fs)
	}
	if fs[0].Kind != TriggerWatch || fs[0].Source != "watch src" || fs[0].Disposition != FiringRun {
		t.Fatalf("firing %+v", fs[0])
	}
}

func TestServeRefusals(t *testing.T) {
	f := newFixture(t, contractYAML(nil))
	id := f.start()
	before := strings.Join(kinds(t, f.env.Home, id), " ")
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8080", "localhost:0", "[::]:0", "127.0.0.1"} {
		_, err := Serve(context.Background(), f.env, id, ServeOptions{Listen: addr})
		if !errors.Is(err, ErrTrigger) {
			t.Errorf("--listen %s: %v, want ErrTrigger", addr, err)
		}
	}
	if _, err := Serve(context.Background(), f.env, id, ServeOptions{}); !errors.Is(err, ErrTrigger) || !strings.Contains(err.Error(), "--listen") {
		t.Errorf("serving a manual loop without a webhook: %v", err)
	}
	if after := strings.Join(kinds(t, f.env.Home, id), " "); after != before {
		t.Errorf("refused serves wrote %s", after)
	}
	if _, err := os.Stat(filepath.Join(loopDir(f.env.Home, id), TokenFileName)); !os.IsNotExist(err) {
		t.Errorf("a refused serve created the token file: %v", err)
	}
}

func TestWebhookToken(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(loopDir(home, "loop-x"), 0o700); err != nil {
		t.Fatal(err)
	}
	file, tok, err := webhookToken(home, "loop-x")
	if err != nil || len(tok) != 64 || readToken(t, file) != tok {
		t.Fatalf("first use: %s %d %v", file, len(tok), err)
	}
	if _, again, err := webhookToken(home, "loop-x"); err != nil || again != tok {
		t.Fatalf("second use: %v, same token %v", err, again == tok)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := webhookToken(home, "loop-x"); !errors.Is(err, ErrTrigger) || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), tok) {
		t.Fatalf("a token file others can read: %v", err)
	}
}

// TestWebhookAuth drives the handler over real HTTP: only POST /, only with the right bearer
// token, only a small strict JSON body; a refused request never fires.
func TestWebhookAuth(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef0123456789abcdef"
	var fired []Firing
	h := &hook{submit: func(_ context.Context, f Firing) (string, error) {
		fired = append(fired, f)
		return FiringRun, nil
	}, now: time.Now}
	h.want = sha256Sum(tok)
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, path, auth, ctype, body string) (int, http.Header) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	big := `{"note": "` + strings.Repeat("x", MaxWebhookBody) + `"}`
	for _, tc := range []struct {
		name, method, path, auth, ctype, body string
		want                                  int
	}{
		{"GET", http.MethodGet, "/", "Bearer " + tok, "", "", http.StatusMethodNotAllowed},
		{"no token", http.MethodPost, "/", "", "", "", http.StatusUnauthorized},
		{"not bearer", http.MethodPost, "/", "Basic " + tok, "", "", http.StatusUnauthorized},
		{"wrong token", http.MethodPost, "/", "Bearer " + strings.Repeat("0", len(tok)), "", "", http.StatusForbidden},
		{"a prefix of the token", http.MethodPost, "/", "Bearer " + tok[:20], "", "", http.StatusForbidden},
		{"oversize body", http.MethodPost, "/", "Bearer " + tok, "application/json", big, http.StatusRequestEntityTooLarge},
		{"not JSON", http.MethodPost, "/", "Bearer " + tok, "text/plain", "hello", http.StatusUnsupportedMediaType},
		{"unknown field", http.MethodPost, "/", "Bearer " + tok, "application/json", `{"note": "a", "run": "rm -rf /"}`, http.StatusBadRequest},
		{"duplicate key", http.MethodPost, "/", "Bearer " + tok, "application/json", `{"note": "a", "note": "b"}`, http.StatusBadRequest},
		{"trailing data", http.MethodPost, "/", "Bearer " + tok, "application/json", `{"note": "a"} {}`, http.StatusBadRequest},
		{"other path", http.MethodPost, "/admin", "Bearer " + tok, "", "", http.StatusNotFound},
	} {
		if code, hdr := do(tc.method, tc.path, tc.auth, tc.ctype, tc.body); code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
		} else if code == http.StatusMethodNotAllowed && hdr.Get("Allow") != http.MethodPost {
			t.Errorf("%s: Allow %q", tc.name, hdr.Get("Allow"))
		}
	}
	if len(fired) != 0 {
		t.Fatalf("refused requests fired %+v", fired)
	}
	if code, _ := do(http.MethodPost, "/", "Bearer "+tok, "", ""); code != http.StatusAccepted {
		t.Fatalf("the right token: %d, want 202", code)
	}
	if code, _ := do(http.MethodPost, "/", "Bearer "+tok, "application/json", `{"note": "token ghp_`+strings.Repeat("aB3dE5fG7h", 4)[:36]+`"}`); code != http.StatusAccepted {
		t.Fatalf("the right token with a note: %d, want 202", code)
	}
	if len(fired) != 2 || fired[0].Kind != TriggerWebhook || !strings.HasPrefix(fired[0].Source, "127.0.0.1:") || strings.Contains(fired[1].Note, "aB3dE5fG7h") {
		t.Fatalf("fired %+v: want two webhook firings from loopback, the note's secret redacted", fired)
	}
}

// TestServeEndsAtABudget: a firing whose round the budget refuses ends serve, blocked.
func TestServeEndsAtABudget(t *testing.T) {
	f := newFixture(t, contractYAML(map[string]string{"trigger": "every 1m", "budget": "{rounds: 1}"}),
		round{calls: write("answer.txt", "41"), claim: "progress", report: "try 1"})
	tick := make(chan struct{})
	f.env.Sleep = func(ctx context.Context, d time.Duration) error {
		select {
		case <-tick:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	id := f.start()
	ready, result, _ := f.serve(id, ServeOptions{})
	waitReady(t, ready, result)
	tick <- struct{}{}
	r := <-result
	rep, _ := Status(f.env, id)
	if r.err != nil || r.state != StateBlocked || rep.Reason != ReasonBudgetExhausted || rep.Rounds != 1 || rep.Firings != 2 {
		t.Fatalf("serve ended %s, %v; status %s (%s), %d rounds, %d firings", r.state, r.err, rep.State, rep.Reason, rep.Rounds, rep.Firings)
	}
}
