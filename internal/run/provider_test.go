package run

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/ledger"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/llm/openaicompat"
	"github.com/reinhq/rein/internal/llm/openaicompat/chattest"
)

// TestResearchOpenAICompat: one Research attempt runs on provider openai-compat against a
// Chat Completions server: the model calls rein_stage_result with a valid contract, the first
// request's last user message is the stage request, and the API key reaches neither the run
// ledger nor the status.
func TestResearchOpenAICompat(t *testing.T) {
	const key = "sk-canary-91c2"
	args := `{"stage":"research","establishedEvidence":[{"id":"e1","statement":"The requirement asks for a thing.","references":["requirement"]}],"remainingUnknowns":[],"requiredEvidenceUnavailable":[],"clarificationQuestions":[]}`
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			io.WriteString(w, chattest.SSE(chattest.Role, chattest.CallStart(0, "call_1", "rein_stage_result"),
				chattest.CallArgs(0, args[:40]), chattest.CallArgs(0, args[40:]), chattest.Finish("tool_calls"), chattest.Usage(100, 20, 0)))
			return
		}
		io.WriteString(w, chattest.SSE(chattest.Role, chattest.Content("Submitted."), chattest.Finish("stop"), chattest.Usage(120, 3, 0)))
	}))
	defer srv.Close()

	env, id := startRunWith(t, func(p *Profile) {
		for role, m := range p.Models {
			if role == RoleWorkflow {
				m.Provider, m.Model, m.BaseURL, m.Script = llm.ProviderOpenAICompat, "local-model", srv.URL+"/v1", ""
				p.Models[role] = m
			}
		}
	})
	env.Agents = testAgents(env.Home, func(_ string, p ModelPolicy) (llm.Model, error) {
		if p.Provider != llm.ProviderOpenAICompat {
			t.Errorf("policy provider %q", p.Provider)
		}
		return openaicompat.New(openaicompat.Config{Model: p.Model, BaseURL: p.BaseURL, APIKey: key, HTTPClient: srv.Client()})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stage, err := Next(ctx, env, id)
	if err != nil || stage != StageResearch {
		t.Fatalf("Next = %s, %v", stage, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(bodies))
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(bodies[0], &req); err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				s += p.Text
			}
		}
		last = s
	}
	if !strings.HasPrefix(last, "Stage request for run") {
		t.Fatalf("last user message = %.80q", last)
	}
	rep, err := Status(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stages) == 0 || rep.Stages[0].State != "completed" {
		t.Fatalf("report = %+v", rep)
	}
	atts := rep.Stages[0].Attempts
	if len(atts) != 1 || atts[0].Outcome != "accepted" || atts[0].Artifact == nil {
		t.Fatalf("attempts = %+v", atts)
	}
	status, _ := json.Marshal(rep)
	data, err := os.ReadFile(filepath.Join(env.Home, "runs", id, ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), key) || strings.Contains(string(status), key) {
		t.Fatal("the API key reached the run ledger or the status")
	}
	if dirHolds(t, filepath.Join(env.Home, "runs", id), key) {
		t.Fatal("the API key reached the run's files")
	}
}
