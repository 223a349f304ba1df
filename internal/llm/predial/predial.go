package predial

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// MaxAge is how long a pre-dialed connection waits for its request before it is closed:
// servers close connections that send nothing, and a request on a connection the server has
// already closed fails without a retry.
const MaxAge = 10 * time.Second

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer opens the transport's connections: a pre-dialed one for the same network and
// address when there is one, else a fresh one from its DialFunc. Safe for concurrent use.
type Dialer struct {
	dial DialFunc

	mu     sync.Mutex
	ahead  map[string][]*Ahead // pending pre-dials by key
	dialed map[string]bool     // keys the transport has dialed
}

// NewDialer returns a Dialer that opens connections with dial.
func NewDialer(dial DialFunc) *Dialer {
	return &Dialer{dial: dial, ahead: map[string][]*Ahead{}, dialed: map[string]bool{}}
}

func key(network, addr string) string { return network + " " + addr }

// Ahead is one pre-dial: a connection opened, or being opened, before its request.
type Ahead struct {
	d       *Dialer
	key     string
	network string
	addr    string
	t       *http.Transport // the transport whose TLS handshake it does; nil: TCP only
	cancel  context.CancelFunc
	done    chan struct{} // closed when the dial has ended

	// guarded by d.mu
	conn      net.Conn  // the TCP connection, or the TLS connection over under
	under     *buffered // the TCP connection under a TLS one
	err       error
	finished  bool        // the dial has ended
	claimed   bool        // a request took it (it owns conn from then on)
	abandoned bool        // the request that claimed it gave up waiting
	closed    bool        // closed unused (Close or MaxAge)
	timer     *time.Timer // closes it at MaxAge
}

// dialAhead starts dialing network and addr in the background, and the TLS handshake t
// would do when t is not nil, or returns nil once the transport has dialed that address.
func (d *Dialer) dialAhead(network, addr string, t *http.Transport) *Ahead {
	k := key(network, addr)
	if t != nil {
		k = tlsKey(network, addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Ahead{d: d, key: k, network: network, addr: addr, t: t, cancel: cancel, done: make(chan struct{})}
	d.mu.Lock()
	if d.dialed[k] {
		d.mu.Unlock()
		cancel()
		return nil
	}
	d.ahead[k] = append(d.ahead[k], a)
	d.mu.Unlock()
	go a.run(ctx)
	return a
}

func (a *Ahead) run(ctx context.Context) {
	conn, err := a.d.dial(ctx, a.network, a.addr)
	var under *buffered
	if err == nil && a.t != nil {
		under = &buffered{Conn: conn}
		var tc *tls.Conn
		if tc, err = handshake(ctx, under, preDialConfig(a.t, a.addr), a.t.TLSHandshakeTimeout); err == nil {
			conn = tc // no nil *tls.Conn in conn
		}
	}
	a.d.mu.Lock()
	a.finished = true
	switch {
	case err != nil:
		a.err = err
		if !a.claimed {
			a.d.remove(a) // useless: a later request dials itself
		}
	case a.closed || a.abandoned:
		_ = conn.Close()
	default:
		a.conn, a.under = conn, under
		if !a.claimed {
			a.timer = time.AfterFunc(MaxAge, a.expire)
		}
	}
	a.d.mu.Unlock()
	a.cancel()
	close(a.done)
}

// remove drops a from the pending pre-dials; d.mu is held.
func (d *Dialer) remove(a *Ahead) {
	list := slices.DeleteFunc(d.ahead[a.key], func(b *Ahead) bool { return b == a })
	if len(list) == 0 {
		delete(d.ahead, a.key)
	} else {
		d.ahead[a.key] = list
	}
}

// expire closes a connection no request took within MaxAge.
func (a *Ahead) expire() {
	a.d.mu.Lock()
	if a.claimed || a.closed {
		a.d.mu.Unlock()
		return
	}
	a.closed = true
	a.d.remove(a)
	conn := a.conn
	a.conn = nil
	a.d.mu.Unlock()
	_ = conn.Close()
}

// Close closes the pre-dialed connection unless a request took it, cancelling and waiting
// for a dial still in flight. A nil Ahead, and a second Close, do nothing.
func (a *Ahead) Close() error {
	if a == nil {
		return nil
	}
	a.d.mu.Lock()
	if a.claimed || a.closed {
		a.d.mu.Unlock()
		return nil
	}
	a.closed = true
	a.d.remove(a)
	if a.timer != nil {
		a.timer.Stop()
	}
	a.d.mu.Unlock()
	a.cancel()
	<-a.done
	a.d.mu.Lock()
	conn := a.conn
	a.conn = nil
	a.d.mu.Unlock()
	if conn != nil {
		return conn.Close()
	}
	return nil
}

// DialContext opens a connection to addr on network: the pre-dialed one when there is one
// (waiting for it while it is in flight), else a fresh one.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if a := d.claim(key(network, addr)); a != nil {
		if conn, err := a.take(ctx); err != nil || conn != nil {
			return conn, err
		}
	}
	return d.dial(ctx, network, addr)
}

// claim records that the transport dials k and takes the oldest pending pre-dial for it, nil
// when there is none.
func (d *Dialer) claim(k string) *Ahead {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dialed[k] = true
	list := d.ahead[k]
	if len(list) == 0 {
		return nil
	}
	a := list[0]
	a.claimed = true
	d.remove(a)
	if a.timer != nil {
		a.timer.Stop()
	}
	return a
}

// take waits for the claimed pre-dial a and returns its connection, its error, or nil and
// nil when the connection cannot be used (the peer closed it).
func (a *Ahead) take(ctx context.Context) (net.Conn, error) {
	select {
	case <-a.done:
	case <-ctx.Done():
		a.d.mu.Lock()
		a.abandoned = true
		conn := a.conn
		a.conn = nil
		a.d.mu.Unlock()
		if conn != nil {
			_ = conn.Close()
		}
		return nil, ctx.Err()
	}
	a.d.mu.Lock()
	conn, err := a.conn, a.err
	a.conn = nil
	a.d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if !a.usable(conn) {
		_ = conn.Close()
		return nil, nil
	}
	return conn, nil
}

// usable reports whether the pre-dialed conn can carry a request. A TCP connection must be
// silent and open. Under TLS the peer may speak first (TLS 1.3 session tickets, an HTTP/2
// server's SETTINGS), all of it encrypted, so the check reads what is there into under,
// which gives it to the TLS layer first, and fails only on an end of stream or a reset
// behind it (or on more than maxUnasked bytes).
func (a *Ahead) usable(conn net.Conn) bool {
	if a.under == nil {
		return alive(conn)
	}
	var ok bool
	a.under.pending, ok = drain(a.under.Conn, a.under.pending, maxUnasked)
	return ok
}
