package cli_test

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/internal/cli"
)

// echoKeyServer answers every request with status and a body that echoes key: exactly, in
// the masked forms providers print ("sk-proj-****…abcd", "sk-...abcd") and quoted from the
// request's own Authorization or x-api-key header. A 500 is a 2 KB HTML page asking for a
// retry at once.
func echoKeyServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sent := r.Header.Get("Authorization")
		if sent == "" {
			sent = "x-api-key: " + r.Header.Get("x-api-key")
		} else {
			sent = "Authorization: " + sent
		}
		key := strings.TrimPrefix(strings.TrimPrefix(sent, "Authorization: Bearer "), "x-api-key: ")
		masked := key[:8] + strings.Repeat("*", 24) + key[len(key)-4:]
		dotted := key[:3] + "..." + key[len(key)-4:]
		var body string
		switch status {
		case 401:
			body = `{"error":{"message":"Incorrect API key provided: ` + masked + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"authentication_error","code":"invalid_api_key"},"type":"error"}`
		case 400:
			body = `{"error":{"message":"could not parse the request sent with ` + sent + ` (key ` + key + `, shown as ` + dotted + `)","type":"invalid_request_error"},"type":"error"}`
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Retry-After-Ms", "1")
			body = "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1><pre>" +
				sent + "\nkey " + masked + "\n" + strings.Repeat("at upstream.handler(proxy.go:42)\n", 56) + "</pre></body></html>"
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestProviderErrorsNeverCarryTheKey: over the real CLI, for every provider and a 401, a
// 400 and a 500 HTML page that echo the key exactly, masked and as a header, the key shows in
// no form in stdout or stderr of `rein -p` and `rein --mode json -p`, in the exports and
// transcript, in the trace file, or in any file under $REIN_HOME; the HTML page is reduced to
// its title.
func TestProviderErrorsNeverCarryTheKey(t *testing.T) {
	keys := map[string]string{
		"openai":        "sk-" + "proj-" + "Qm7vR2xK9pLw4ZtB8nYc3HdF6sJa1UeG5oViQZvK",
		"anthropic":     "sk-" + "ant-api03-" + "Hq2Lr8Vn3Wc6Yx9Tb4Kd7Mf1Pg5Sj0Za2Rt8NuEwXy",
		"openai-compat": "local" + "Tq8Wm3Zr6Xv2Nc9Lp4KsJh",
	}
	for provider, key := range keys {
		forms := []string{key, key[8:20], key[len(key)-12:], "*" + key[len(key)-4:], "." + key[len(key)-4:]}
		for _, status := range []int{401, 400, 500} {
			t.Run(fmt.Sprintf("%s/%d", provider, status), func(t *testing.T) {
				dir, home := cleanEnv(t)
				srv := echoKeyServer(t, status)
				trace := filepath.Join(dir, "trace.json")
				base := srv.URL
				if provider != "anthropic" {
					base += "/v1"
				}
				args := []string{"--provider", provider, "--model", "m", "--base-url", base, "--api-key", key,
					"--max-retries", "1", "--trace", "file:" + trace}
				var outputs []string
				for _, mode := range [][]string{{"-p", "hi"}, {"--mode", "json", "-p", "hi"}} {
					code, stdout, stderr := rein(t, dir, "", append(args, mode...)...)
					if code != cli.ExitModel {
						t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", mode, code, cli.ExitModel, stdout, stderr)
					}
					outputs = append(outputs, stdout, stderr)
					if status == 500 && !strings.Contains(stdout+stderr, "500 Internal Server Error") {
						t.Errorf("%v: the HTML page is not reduced to its title:\n%s\n%s", mode, stdout, stderr)
					}
					if status == 401 && !strings.Contains(stdout+stderr, "Incorrect API key provided: [REDACTED:api-key]") {
						t.Errorf("%v: the error is not reported with the key redacted:\n%s\n%s", mode, stdout, stderr)
					}
					if strings.Contains(stdout+stderr, "upstream.handler") {
						t.Errorf("%v: the HTML page was carried whole", mode)
					}
				}
				ledgers, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "ledger.jsonl"))
				if len(ledgers) != 2 {
					t.Fatalf("sessions: %v", ledgers)
				}
				for _, l := range ledgers {
					if b, _ := os.ReadFile(l); status == 401 && !strings.Contains(string(b), "[REDACTED:api-key]") {
						t.Errorf("%s does not record the redacted error", l)
					}
					id := filepath.Base(filepath.Dir(l))
					for _, cmd := range [][]string{{"session", "export", id, "--format", "json"},
						{"session", "export", id, "--format", "markdown"}, {"session", "show", id}} {
						code, stdout, stderr := rein(t, dir, "", cmd...)
						if code != 0 {
							t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
						}
						if !strings.Contains(stdout, "hi") {
							t.Fatalf("%v: not a transcript:\n%s", cmd, stdout)
						}
						outputs = append(outputs, stdout, stderr)
					}
				}
				spans, err := os.ReadFile(trace)
				if err != nil || len(spans) == 0 {
					t.Fatalf("trace file: %v (%d bytes)", err, len(spans))
				}
				outputs = append(outputs, string(spans))
				files := 0
				filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(path)
					if err != nil {
						t.Errorf("%s: %v", path, err)
					}
					files++
					outputs = append(outputs, path+"\n"+string(b))
					return nil
				})
				if files == 0 {
					t.Fatal("no files under $REIN_HOME")
				}
				for _, out := range outputs {
					for _, f := range forms {
						if i := strings.Index(out, f); i >= 0 {
							t.Errorf("the key (as %q) leaked:\n%s", f, out[max(0, i-200):min(len(out), i+200)])
						}
					}
				}
			})
		}
	}
}

// TestSpendLimitIsNotRetried: Anthropic's 429 with error_code enforced_spend_limit_reached
// and OpenAI's 429 insufficient_quota end the run at once (exit 3), whatever retries allow:
// the server sees one request.
func TestSpendLimitIsNotRetried(t *testing.T) {
	for provider, body := range map[string]string{
		"anthropic": `{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your monthly API usage limit. Please try again later.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
		"openai":    `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
	} {
		t.Run(provider, func(t *testing.T) {
			dir, _ := cleanEnv(t)
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				requests.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After-Ms", "1")
				w.WriteHeader(429)
				io.WriteString(w, body)
			}))
			defer srv.Close()
			base := srv.URL
			if provider == "openai" {
				base += "/v1"
			}
			code, stdout, stderr := rein(t, dir, "", "--provider", provider, "--model", "m", "--base-url", base,
				"--api-key", "test-key-0123456789", "--max-retries", "4", "--mode", "json", "-p", "hi")
			if code != cli.ExitModel {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, cli.ExitModel, stdout, stderr)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("the server saw %d requests; a spend limit must not be retried", n)
			}
			if !strings.Contains(stdout, "spend_limit") {
				t.Errorf("the result does not name the spend limit:\n%s", stdout)
			}
		})
	}
}
