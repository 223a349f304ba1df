package predial

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"time"
)

// maxUnasked is how much a peer may send on a pre-dialed TLS connection before its request
// (session tickets, an HTTP/2 server's first frames) for the connection to be handed over.
const maxUnasked = 64 << 10

func tlsKey(network, addr string) string { return "tls " + key(network, addr) }

// dialTLS returns t's DialTLSContext: the pre-dialed TLS connection to addr when there is
// one, else a connection dialed with d and the handshake t would do itself.
func (d *Dialer) dialTLS(t *http.Transport) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if a := d.claim(tlsKey(network, addr)); a != nil {
			if conn, err := a.take(ctx); err != nil || conn != nil {
				return conn, err
			}
		}
		conn, err := d.dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// The transport calls its DialTLSContext after its one-time HTTP/2 set-up, so
		// TLSClientConfig is final here.
		tc, err := handshake(ctx, conn, config(t.TLSClientConfig, addr), t.TLSHandshakeTimeout)
		if err != nil {
			return nil, err // not a nil *tls.Conn in a non-nil net.Conn
		}
		return tc, nil
	}
}

// preDialConfig is the TLS configuration t would handshake with for addr. Clone runs t's
// one-time HTTP/2 set-up first (which adds "h2" and "http/1.1" to NextProtos when HTTP/2 is
// on), so the pre-dial offers what the transport's own handshake would, and reading t's
// configuration cannot race with the first request's set-up.
func preDialConfig(t *http.Transport, addr string) *tls.Config {
	return config(t.Clone().TLSClientConfig, addr)
}

// config is base as net/http's transport uses it for a connection to addr: a copy (the
// defaults, with the system roots, when nil) with ServerName the host when unset.
func config(base *tls.Config, addr string) *tls.Config {
	cfg := base.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	return cfg
}

// handshake runs the TLS client handshake over conn with cfg, for at most timeout when it
// is not 0; it closes conn when the handshake fails.
func handshake(ctx context.Context, conn net.Conn, cfg *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errHandshakeTimeout)
		defer cancel()
	}
	tc := tls.Client(conn, cfg)
	err := tc.HandshakeContext(ctx)
	if err == nil {
		return tc, nil
	}
	_ = conn.Close()
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(context.Cause(ctx), errHandshakeTimeout) {
		return nil, timeoutError{}
	}
	return nil, err
}

var errHandshakeTimeout = errors.New("predial: TLS handshake timeout")

// timeoutError is a handshake that ran past the transport's TLSHandshakeTimeout: a net.Error
// that is a timeout, as the transport's own.
type timeoutError struct{}

func (timeoutError) Error() string {
	return "TLS handshake timeout (the transport's TLSHandshakeTimeout)"
}
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Unwrap() error   { return context.DeadlineExceeded }

// buffered is the TCP connection under a pre-dialed TLS connection: it gives the TLS layer
// first what the liveness check read from the socket.
type buffered struct {
	net.Conn
	pending []byte
}

func (b *buffered) Read(p []byte) (int, error) {
	if len(b.pending) == 0 {
		return b.Conn.Read(p)
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	if len(b.pending) == 0 {
		b.pending = nil
	}
	return n, nil
}
