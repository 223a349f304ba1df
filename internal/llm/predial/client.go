package predial

import (
	"github.com/reinhq/rein/internal/lazy"
	"net"
	"net/http"
	"net/url"
	"time"
)

// NewTransport returns a clone of http.DefaultTransport whose connections d opens (a fresh
// transport with the default's settings when http.DefaultTransport was replaced): its
// DialContext is d's, and its DialTLSContext hands out d's pre-dialed TLS connections or
// dials with d and does the handshake the transport would, with the transport's
// TLSClientConfig and TLSHandshakeTimeout as they are at dial time. ForceAttemptHTTP2 stays
// true: with DialTLSContext set, it is what keeps HTTP/2 on. A Clone of the transport keeps
// handshaking with the original's TLS settings.
func NewTransport(d *Dialer) *http.Transport {
	var t *http.Transport
	if def, ok := http.DefaultTransport.(*http.Transport); ok {
		t = def.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true, MaxIdleConns: 100,
			IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
			ExpectContinueTimeout: time.Second}
	}
	t.DialContext = d.DialContext
	t.DialTLSContext = d.dialTLS(t)
	return t
}

// Start pre-dials the connection a request to baseURL through t would open, with d, and for
// https does t's TLS handshake on it; t must dial through d (see [NewTransport]; a t with no
// DialTLSContext gets a TCP connection only, for its own handshake). It returns nil when
// there is nothing to pre-dial (see the package contract); the caller closes a non-nil Ahead
// when it is done with the client.
func (d *Dialer) Start(t *http.Transport, baseURL string) *Ahead {
	addr, https, ok := target(t, baseURL)
	if !ok {
		return nil
	}
	if !https || t.DialTLSContext == nil {
		t = nil
	}
	return d.dialAhead("tcp", addr, t)
}

// target is the address the transport dials for a request to baseURL and whether it is
// https, false when it would dial something else (a proxy) or the URL is no absolute
// http(s) URL with an ASCII host.
func target(t *http.Transport, baseURL string) (addr string, https, ok bool) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", false, false
	}
	port := u.Port()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, false
	case port == "" && u.Scheme == "http":
		port = "80"
	case port == "":
		port = "443"
	}
	host := u.Hostname()
	if host == "" || !ascii(host) {
		return "", false, false
	}
	if t.Proxy != nil {
		p, err := t.Proxy(&http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}, Host: u.Host})
		if err != nil || p != nil {
			return "", false, false
		}
	}
	return net.JoinHostPort(host, port), u.Scheme == "https", true
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// shared is the process's provider client: one pool for every runtime, as http.DefaultClient
// had. The client has no overall timeout: a stream lasts as long as the model writes.
// Made on first use.
func shared() *sharedClient { return sharedOnce.Get(newShared) }

var sharedOnce lazy.Value[*sharedClient]

func newShared() *sharedClient {
	d := NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	t := NewTransport(d)
	return &sharedClient{d: d, t: t, c: &http.Client{Transport: t}}
}

type sharedClient struct {
	d *Dialer
	t *http.Transport
	c *http.Client
}

// Client returns rein's shared HTTP client for provider requests, over the shared Dialer.
func Client() *http.Client { return shared().c }

// Start pre-dials, through the shared Dialer, the provider at baseURL for [Client]'s first
// request there (see [Dialer.Start]).
func Start(baseURL string) *Ahead {
	s := shared()
	return s.d.Start(s.t, baseURL)
}
