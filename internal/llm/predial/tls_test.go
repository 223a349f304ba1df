package predial

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// newTLSServer is a started TLS server answering body, with HTTP/2 when h2 is set.
func newTLSServer(t *testing.T, body string, h2 bool) *server {
	t.Helper()
	s := unstarted(body)
	s.EnableHTTP2 = h2
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// trusting points tr at the roots that trust certs (none: nothing is trusted).
func trusting(tr *http.Transport, certs ...*x509.Certificate) {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
}

// handshaken is the TLS state of the connection a pre-dialed, nil when it holds none.
func handshaken(a *Ahead) *tls.ConnectionState {
	<-a.done
	a.d.mu.Lock()
	defer a.d.mu.Unlock()
	tc, ok := a.conn.(*tls.Conn)
	if !ok {
		return nil
	}
	cs := tc.ConnectionState()
	return &cs
}

func protoGet(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.ProtoMajor, string(b), err
}

// TestTLSPreDialCarriesTheFirstRequest: against an HTTPS server the pre-dial completes the
// handshake before any request, offering what the transport would (HTTP/2 when the server
// has it, else HTTP/1.1); the requests run on that one connection.
func TestTLSPreDialCarriesTheFirstRequest(t *testing.T) {
	for _, c := range []struct {
		name  string
		h2    bool
		alpn  string
		major int
	}{{"http2", true, "h2", 2}, {"http1", false, "http/1.1", 1}} {
		t.Run(c.name, func(t *testing.T) {
			srv := newTLSServer(t, "ok", c.h2)
			cd := &countingDialer{}
			d, tr, client := setup(cd)
			defer tr.CloseIdleConnections()
			trusting(tr, srv.Certificate())
			a := d.Start(tr, srv.URL+"/v1")
			if a == nil {
				t.Fatal("Start dialed nothing")
			}
			defer a.Close()
			wait(t, srv.accepted, "connection accepted before the request")
			cs := handshaken(a)
			if cs == nil || !cs.HandshakeComplete || cs.NegotiatedProtocol != c.alpn {
				t.Fatalf("pre-dialed connection: %+v; want a completed handshake that negotiated %q", cs, c.alpn)
			}
			for range 2 {
				major, body, err := protoGet(t, client, srv.URL+"/v1/chat")
				if err != nil || body != "ok" || major != c.major {
					t.Fatalf("request: HTTP/%d %q, %v; want HTTP/%d ok", major, body, err, c.major)
				}
			}
			if got := srv.conns.Load(); got != 1 {
				t.Errorf("server accepted %d connections, want 1 (the pre-dialed one)", got)
			}
			if got := cd.n.Load(); got != 1 {
				t.Errorf("%d dials, want 1", got)
			}
			if d.Start(tr, srv.URL) != nil {
				t.Error("Start dialed an address the transport has dialed already")
			}
		})
	}
}

// TestUntrustedCertificateIsReportedByTheRequest: a pre-dial whose handshake fails is
// silent. When it failed before the request, the request dials and handshakes itself (two
// connections); when the request was waiting for it, the request reports its error (one).
// Either way the error says the certificate is not trusted.
func TestUntrustedCertificateIsReportedByTheRequest(t *testing.T) {
	for _, c := range []struct {
		name    string
		waiting bool
		dials   int32
	}{{"failed before", false, 2}, {"request waiting", true, 1}} {
		t.Run(c.name, func(t *testing.T) {
			srv := newTLSServer(t, "ok", true)
			cd := &countingDialer{}
			if c.waiting {
				cd.hold = make(chan struct{})
			}
			d, tr, client := setup(cd)
			trusting(tr) // trusts nothing
			a := d.Start(tr, srv.URL)
			defer a.Close()
			errc := make(chan error, 1)
			if c.waiting {
				go func() {
					_, _, err := protoGet(t, client, srv.URL)
					errc <- err
				}()
				for !claimed(a) {
					time.Sleep(time.Millisecond)
				}
				close(cd.hold)
			} else {
				<-a.done
				_, _, err := protoGet(t, client, srv.URL)
				errc <- err
			}
			err := <-errc
			var unknown x509.UnknownAuthorityError
			if !errors.As(err, &unknown) {
				t.Fatalf("request error = %v, want the certificate's unknown authority", err)
			}
			if got := cd.n.Load(); got != c.dials {
				t.Errorf("%d dials, want %d", got, c.dials)
			}
			if got := srv.conns.Load(); got != c.dials {
				t.Errorf("server accepted %d connections, want %d", got, c.dials)
			}
		})
	}
}

// TestPeerClosedTLSConnectionIsNotHandedOver: the server completes the handshake (TLS 1.3:
// it sends session tickets), then closes; the request dials a fresh connection.
func TestPeerClosedTLSConnectionIsNotHandedOver(t *testing.T) {
	cert := newTLSServer(t, "unused", false) // for its certificate and server config
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := &closeFirst{Listener: tls.NewListener(ln, cert.TLS.Clone()), closed: make(chan struct{})}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go hs.Serve(first)
	defer hs.Close()
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	trusting(tr, cert.Certificate())
	base := "https://" + ln.Addr().String()
	a := d.Start(tr, base)
	if cs := handshaken(a); cs == nil || cs.Version != tls.VersionTLS13 {
		t.Fatalf("pre-dialed connection: %+v; want a TLS 1.3 connection", cs)
	}
	<-first.closed
	// The close is on its way over loopback.
	eventually(t, "the liveness check to see the close", func() bool { return !a.usable(heldConn(a)) })
	if body, err := get(t, c, base); err != nil || body != "ok" {
		t.Fatalf("request: %q, %v", body, err)
	}
	if got := cd.n.Load(); got != 2 {
		t.Errorf("%d dials, want 2 (the closed pre-dial, the request's own)", got)
	}
}

// TestTLSConnectionWithUnaskedBytesIsHandedOver: what an HTTP/2 server and TLS 1.3 send
// before the request (SETTINGS, session tickets) is read by the liveness check and still
// reaches the TLS layer: the request runs on the pre-dialed connection.
func TestTLSConnectionWithUnaskedBytesIsHandedOver(t *testing.T) {
	srv := newTLSServer(t, "ok", true)
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	trusting(tr, srv.Certificate())
	a := d.Start(tr, srv.URL)
	defer a.Close()
	handshaken(a)
	// The server's first bytes are on their way.
	eventually(t, "the liveness check to read the server's first bytes", func() bool {
		if !a.usable(heldConn(a)) {
			t.Fatal("liveness check failed on an open connection")
		}
		return len(a.under.pending) > 0
	})
	if major, body, err := protoGet(t, c, srv.URL); err != nil || body != "ok" || major != 2 {
		t.Fatalf("request: HTTP/%d %q, %v; want HTTP/2 ok", major, body, err)
	}
	if cd.n.Load() != 1 || srv.conns.Load() != 1 {
		t.Errorf("%d dials, %d connections; want 1 and 1", cd.n.Load(), srv.conns.Load())
	}
}

// TestHTTPSThroughConnectProxy: through an HTTP proxy nothing is pre-dialed; the transport
// dials the proxy with DialContext, sends CONNECT and does the target's TLS itself (HTTP/2
// still negotiated), not through DialTLSContext.
func TestHTTPSThroughConnectProxy(t *testing.T) {
	target := newTLSServer(t, "direct", true)
	var connects atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		connects.Add(1)
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 200 OK\r\n\r\n")
		go io.Copy(up, rw.Reader) // what the client sent after CONNECT
		io.Copy(conn, up)
	}))
	defer proxy.Close()
	cd := &countingDialer{}
	d, tr, c := setup(cd)
	defer tr.CloseIdleConnections()
	trusting(tr, target.Certificate())
	pu, _ := url.Parse(proxy.URL)
	tr.Proxy = http.ProxyURL(pu)
	if a := d.Start(tr, target.URL); a != nil {
		a.Close()
		t.Fatal("Start pre-dialed past the proxy")
	}
	if major, body, err := protoGet(t, c, target.URL); err != nil || body != "direct" || major != 2 {
		t.Fatalf("request: HTTP/%d %q, %v; want HTTP/2 direct", major, body, err)
	}
	if connects.Load() != 1 || target.conns.Load() != 1 || cd.n.Load() != 1 {
		t.Errorf("%d CONNECTs, %d target connections, %d dials; want 1 each", connects.Load(), target.conns.Load(), cd.n.Load())
	}
	if d.dialed[tlsKey("tcp", target.Listener.Addr().String())] {
		t.Error("the transport dialed the target through DialTLSContext")
	}
}

// TestHandshakeTimeoutIsAnErrorThatTimesOut: a server that never answers the handshake
// gives the request a timeout error after the transport's TLSHandshakeTimeout.
func TestHandshakeTimeoutIsAnErrorThatTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the test ends
		}
	}()
	_, tr, c := setup(&countingDialer{})
	tr.TLSHandshakeTimeout = 50 * time.Millisecond
	_, _, err = protoGet(t, c, "https://"+ln.Addr().String())
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("request error = %v, want a timeout", err)
	}
}

func heldConn(a *Ahead) net.Conn {
	a.d.mu.Lock()
	defer a.d.mu.Unlock()
	return a.conn
}

// eventually waits for cond, failing the test when it is still false after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s", what)
		}
	}
}

// TestWrongHostIsReportedByTheRequest: the pre-dial verifies the certificate against the
// URL's host, as the transport does; a certificate for another name fails it silently and
// the request reports the mismatch.
func TestWrongHostIsReportedByTheRequest(t *testing.T) {
	srv := newTLSServer(t, "ok", true) // certificate for 127.0.0.1, ::1 and example.com
	cd := &countingDialer{}
	d, tr, client := setup(cd)
	trusting(tr, srv.Certificate())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "https://localhost:" + port
	a := d.Start(tr, base)
	defer a.Close()
	if handshaken(a) != nil {
		t.Fatal("the pre-dial accepted a certificate for another host")
	}
	_, _, err := protoGet(t, client, base)
	var wrong x509.HostnameError
	if !errors.As(err, &wrong) || wrong.Host != "localhost" {
		t.Fatalf("request error = %v, want the certificate's host mismatch for localhost", err)
	}
}
