package loop

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/secret"
	"github.com/reinhq/rein/internal/strictjson"
)

// MaxWebhookBody is the largest webhook request body; a larger one is refused (413).
const MaxWebhookBody = 16 << 10

// maxNote bounds the note a webhook request may carry into the ledger.
const maxNote = 500

// TokenFileName is the webhook token's file in the loop's directory.
const TokenFileName = "webhook.token"

// listenLoopback listens on addr, which must be a loopback IP literal and a port: the
// webhook is never reachable from another machine.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: --listen %q: %w (give 127.0.0.1:PORT)", ErrTrigger, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%w: --listen %q: the webhook listens on a loopback address only (127.0.0.1:PORT or [::1]:PORT), never on %q", ErrTrigger, addr, cmpOr(host, "every interface"))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: --listen %q: %w", ErrTrigger, addr, err)
	}
	return ln, nil
}

// webhookToken reads the loop's webhook token from its file, creating it (0600, 32 random
// bytes in hex) on first use. A file group or others can read or write is refused.
func webhookToken(home, id string) (file, token string, err error) {
	file = filepath.Join(loopDir(home, id), TokenFileName)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		var b [32]byte
		_, _ = rand.Read(b[:])
		tok := hex.EncodeToString(b[:])
		_, werr := f.WriteString(tok + "\n")
		if werr == nil {
			werr = f.Sync()
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(file)
			return file, "", fmt.Errorf("write the webhook token %s: %w", file, werr)
		}
		return file, tok, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return file, "", fmt.Errorf("create the webhook token %s: %w", file, err)
	}
	fi, err := os.Lstat(file)
	if err != nil {
		return file, "", fmt.Errorf("the webhook token %s: %w", file, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return file, "", fmt.Errorf("%w: the webhook token %s has mode %s: it must be a regular file only its owner can read (chmod 600 %s, or remove it for a new token)", ErrTrigger, file, fi.Mode(), file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return file, "", fmt.Errorf("the webhook token %s: %w", file, err)
	}
	tok := strings.TrimSpace(string(data))
	if len(tok) < 32 {
		return file, "", fmt.Errorf("%w: the webhook token in %s is shorter than 32 characters; remove the file for a new token", ErrTrigger, file)
	}
	return file, tok, nil
}

// webhookBody is what a request may send: nothing, or this object.
type webhookBody struct {
	Note string `json:"note,omitempty"`
}

// webhook serves the loop's webhook on ln; stop shuts it down.
func (s *server) webhook(ln net.Listener) (stop func(), url, file string, err error) {
	file, tok, err := webhookToken(s.env.Home, s.id)
	if err != nil {
		return nil, "", file, err
	}
	h := &hook{want: sha256.Sum256([]byte(tok)), submit: s.submit, now: s.env.now}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 8 << 10,
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return stop, "http://" + ln.Addr().String() + "/", file, nil
}

// hook is the webhook's handler: POST / with the bearer token, an empty body or a strict
// JSON object {"note": TEXT}; 202 once the firing is recorded.
type hook struct {
	want   [sha256.Size]byte
	submit func(context.Context, Firing) (string, error)
	now    func() time.Time
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		hookError(w, http.StatusNotFound, "the webhook is POST /")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		hookError(w, http.StatusMethodNotAllowed, "the webhook takes POST only")
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rein loop"`)
		hookError(w, http.StatusUnauthorized, "an Authorization: Bearer TOKEN header is required")
		return
	}
	got := sha256.Sum256([]byte(tok)) // equal lengths: the compare reveals nothing of the token's
	if subtle.ConstantTimeCompare(got[:], h.want[:]) != 1 {
		hookError(w, http.StatusForbidden, "wrong token")
		return
	}
	body, status, msg := readHookBody(w, r)
	if status != 0 {
		hookError(w, status, msg)
		return
	}
	f := Firing{Kind: TriggerWebhook, At: h.now(), Source: r.RemoteAddr, Note: body.Note}
	d, err := h.submit(r.Context(), f)
	if err != nil {
		hookError(w, http.StatusServiceUnavailable, "the loop is no longer served")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]string{"disposition": d})
}

// readHookBody reads and checks the body; a non-zero status refuses the request.
func readHookBody(w http.ResponseWriter, r *http.Request) (webhookBody, int, string) {
	var b webhookBody
	if r.ContentLength > MaxWebhookBody {
		return b, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", MaxWebhookBody)
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
	if errors.As(err, new(*http.MaxBytesError)) {
		return b, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", MaxWebhookBody)
	}
	if err != nil {
		return b, http.StatusBadRequest, "the body could not be read"
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return b, 0, ""
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return b, http.StatusUnsupportedMediaType, "a body must be application/json"
	}
	if err := strictjson.Unmarshal(data, &b); err != nil {
		return b, http.StatusBadRequest, "the body must be a JSON object {\"note\": TEXT}: " + err.Error()
	}
	if len(b.Note) > maxNote {
		return b, http.StatusBadRequest, fmt.Sprintf("the note is longer than %d bytes", maxNote)
	}
	b.Note = secret.Redact(b.Note)
	return b, 0, ""
}

func hookError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
