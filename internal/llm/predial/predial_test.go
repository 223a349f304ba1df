package predial

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// server is an httptest server that reports every connection it accepts and closes.
type server struct {
	*httptest.Server
	accepted chan struct{}
	closed   chan struct{}
	conns    atomic.Int32
}

func newServer(t *testing.T, body string) *server {
	t.Helper()
	s := unstarted(body)
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func unstarted(body string) *server {
	s := &server{accepted: make(chan struct{}, 16), closed: make(chan struct{}, 16)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
			s.accepted <- struct{}{}
		case http.StateClosed:
			s.closed <- struct{}{}
		}
	}
	return s
}

// countingDialer dials for real and counts its dials; fail, when set, answers the dial of
// that number (1 for the first) with an error after gate (when set) is closed; hold, when
// set, delays the first dial until it is closed.
type countingDialer struct {
	n    atomic.Int32
	fail int32
	gate chan struct{}
	hold chan struct{}
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

func (c *countingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n := c.n.Add(1)
	if n == c.fail {
		if c.gate != nil {
			<-c.gate
		}
		return nil, errRefused
	}
	if n == 1 && c.hold != nil {
		<-c.hold
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// setup returns a Dialer over cd and a client over its transport, with no proxy.
func setup(cd *countingDialer) (*Dialer, *http.Transport, *http.Client) {
	d := NewDialer(cd.dial)
	tr := NewTransport(d)
	tr.Proxy = nil
	return d, tr, &http.Client{Transport: tr}
}

func get(t *testing.T, c *http.Client, u string) (string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// TestFirstRequestUsesThePreDialedConnection: the server accepts the connection before any
// request; the first request and the next one run on it, and nothing else is dialed.
func TestFirstRequestUsesThePreDialedConnection(t *testing.T) {
	srv := newServer(t, "ok")
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	a := d.Start(tr, srv.URL+"/v1")
	if a == nil {
		t.Fatal("Start dialed nothing")
	}
	wait(t, srv.accepted, "connection accepted before the request")
	for range 2 {
		if body, err := get(t, c, srv.URL+"/v1/chat"); err != nil || body != "ok" {
			t.Fatalf("request: %q, %v", body, err)
		}
	}
	if got := srv.conns.Load(); got != 1 {
		t.Errorf("server accepted %d connections, want 1 (the pre-dialed one)", got)
	}
	if got := cd.n.Load(); got != 1 {
		t.Errorf("%d dials, want 1", got)
	}
	a.Close() // the request owns the connection: Close leaves it alone
	if body, err := get(t, c, srv.URL+"/v1/chat"); err != nil || body != "ok" || srv.conns.Load() != 1 {
		t.Errorf("after Close: %q, %v, %d connections; want the same connection still in use", body, err, srv.conns.Load())
	}
	if d.Start(tr, srv.URL) != nil {
		t.Error("Start dialed an address the transport has dialed already")
	}
}

// TestRequestWaitingForAFailedPreDialReportsItsError: the request finds the pre-dial in
// flight and waits; the dial fails and the request reports that error without a second dial.
func TestRequestWaitingForAFailedPreDialReportsItsError(t *testing.T) {
	srv := newServer(t, "ok")
	cd := &countingDialer{fail: 1, gate: make(chan struct{})}
	d, tr, c := setup(cd)
	a := d.Start(tr, srv.URL)
	errc := make(chan error, 1)
	go func() {
		_, err := get(t, c, srv.URL)
		errc <- err
	}()
	for !claimed(a) {
		time.Sleep(time.Millisecond)
	}
	close(cd.gate)
	err := <-errc
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("request error = %v, want the pre-dial's refusal", err)
	}
	if got := cd.n.Load(); got != 1 {
		t.Errorf("%d dials, want 1 (an unreachable host costs one dial)", got)
	}
	if srv.conns.Load() != 0 {
		t.Error("the server saw a connection")
	}
	a.Close()
}

func claimed(a *Ahead) bool {
	a.d.mu.Lock()
	defer a.d.mu.Unlock()
	return a.claimed
}

// TestFailedPreDialIsSilent: a pre-dial that failed before the request leaves no trace; the
// request dials itself and succeeds.
func TestFailedPreDialIsSilent(t *testing.T) {
	srv := newServer(t, "ok")
	cd := &countingDialer{fail: 1}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	a := d.Start(tr, srv.URL)
	<-a.done
	if body, err := get(t, c, srv.URL); err != nil || body != "ok" {
		t.Fatalf("request: %q, %v", body, err)
	}
	if cd.n.Load() != 2 || srv.conns.Load() != 1 {
		t.Errorf("%d dials, %d connections; want 2 dials (the failed pre-dial, the request's) and 1 connection",
			cd.n.Load(), srv.conns.Load())
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}

// TestPeerClosedConnectionIsNotHandedOver: the server closes the pre-dialed connection
// before the request; the request dials a fresh one instead of failing on the dead one.
func TestPeerClosedConnectionIsNotHandedOver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := &closeFirst{Listener: ln, closed: make(chan struct{})}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go hs.Serve(first)
	defer hs.Close()
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	base := "http://" + ln.Addr().String()
	a := d.Start(tr, base)
	<-a.done
	<-first.closed
	for {
		a.d.mu.Lock()
		conn := a.conn
		a.d.mu.Unlock()
		if !alive(conn) {
			break
		}
		time.Sleep(time.Millisecond) // the end of stream is on its way over loopback
	}
	if body, err := get(t, c, base); err != nil || body != "ok" {
		t.Fatalf("request: %q, %v", body, err)
	}
	if got := cd.n.Load(); got != 2 {
		t.Errorf("%d dials, want 2 (the closed pre-dial, the request's own)", got)
	}
}

// closeFirst closes the first connection it accepts.
type closeFirst struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		first := false
		l.once.Do(func() { first = true })
		if !first {
			return c, nil
		}
		if tc, ok := c.(*tls.Conn); ok {
			_ = tc.Handshake() // closed after the handshake: what a server that drops it does
		}
		c.Close()
		close(l.closed)
	}
}

// TestProxyDisablesThePreDial: with a proxy for the base URL nothing is pre-dialed and the
// request goes through the proxy.
func TestProxyDisablesThePreDial(t *testing.T) {
	target := newServer(t, "direct")
	proxy := newServer(t, "via proxy")
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	pu, _ := url.Parse(proxy.URL)
	tr.Proxy = http.ProxyURL(pu)
	if a := d.Start(tr, target.URL); a != nil {
		a.Close()
		t.Fatal("Start pre-dialed past the proxy")
	}
	if body, err := get(t, c, target.URL); err != nil || body != "via proxy" {
		t.Fatalf("request: %q, %v; want the proxy's answer", body, err)
	}
	if target.conns.Load() != 0 || proxy.conns.Load() != 1 {
		t.Errorf("target saw %d connections, proxy %d; want 0 and 1", target.conns.Load(), proxy.conns.Load())
	}
}

// TestCloseClosesAnUnusedConnection: a pre-dialed connection no request took is closed by
// Close (the server sees it end); a dial still in flight is cancelled and waited for.
func TestCloseClosesAnUnusedConnection(t *testing.T) {
	srv := newServer(t, "ok")
	d, tr, _ := setup(&countingDialer{})
	a := d.Start(tr, srv.URL)
	wait(t, srv.accepted, "pre-dialed connection")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wait(t, srv.closed, "close of the unused connection")
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	blocked := NewDialer(func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	b := blocked.Start(NewTransport(blocked), "https://provider.invalid/v1")
	b.Close()
	select {
	case <-b.done:
	default:
		t.Error("Close returned while the dial was still running")
	}
	var nothing *Ahead
	if err := nothing.Close(); err != nil {
		t.Error(err)
	}
}

// TestExpiredConnectionIsClosed: at MaxAge an unused connection is closed and forgotten; the
// request dials itself.
func TestExpiredConnectionIsClosed(t *testing.T) {
	srv := newServer(t, "ok")
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	a := d.Start(tr, srv.URL)
	<-a.done
	a.expire() // what the MaxAge timer runs
	wait(t, srv.closed, "close of the expired connection")
	if body, err := get(t, c, srv.URL); err != nil || body != "ok" || cd.n.Load() != 2 {
		t.Errorf("request: %q, %v after %d dials; want ok after 2", body, err, cd.n.Load())
	}
}

func TestTarget(t *testing.T) {
	direct := &http.Transport{}
	proxied := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy:3128"})}
	for _, c := range []struct {
		tr   *http.Transport
		url  string
		want string
	}{
		{direct, "https://api.anthropic.com", "api.anthropic.com:443"},
		{direct, "http://localhost:11434/v1", "localhost:11434"},
		{direct, "http://[::1]/v1", "[::1]:80"},
		{direct, "https://user@example.com:8443/v1", "example.com:8443"},
		{direct, "ftp://example.com", ""},
		{direct, "/v1", ""},
		{direct, "https://bücher.example/v1", ""},
		{proxied, "https://api.openai.com/v1", ""},
	} {
		got, _, ok := target(c.tr, c.url)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("target(%q) = %q, %v; want %q", c.url, got, ok, c.want)
		}
	}
}
