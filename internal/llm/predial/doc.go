// Package predial opens the connection to a model provider while rein starts up, so that the
// first request does not wait for DNS, the TCP connect and, for https, the TLS handshake
// after its intent is durable.
//
// [Client] is rein's one HTTP client for provider requests when the caller brings none: a
// clone of [net/http.DefaultTransport] (proxy from the environment, HTTP/2, the default
// roots, the same timeouts and pool) whose connections are opened by a [Dialer]. [Start]
// dials, in the background, the address a request to a base URL would connect to, and for
// https completes the TLS handshake the transport would do; the transport's DialContext
// (http) or DialTLSContext (https) hands that connection to the first request to the same
// address. Only a connection is opened early: no byte of a request is written before the
// transport sends it.
//
// The contract:
//
//   - No pre-dial when the transport's Proxy names a proxy for the base URL (the request goes
//     to the proxy, which is dialed at request time as before), for a base URL that is not
//     absolute http or https, for a host that is not plain ASCII (the transport would convert
//     it), or once a connection to that address has been dialed through the Dialer (the
//     transport's pool holds it or did).
//   - https: the handshake is the transport's own. The TLS configuration is a copy of the
//     transport's TLSClientConfig after its one-time HTTP/2 set-up (nil: the defaults, with
//     the system roots, which honour SSL_CERT_FILE and SSL_CERT_DIR), ServerName the URL's
//     host when unset, NextProtos "h2" then "http/1.1" when HTTP/2 is on (ForceAttemptHTTP2,
//     which DialTLSContext needs), certificates verified as configured, at most
//     TLSHandshakeTimeout. The transport takes a *tls.Conn from DialTLSContext as past the
//     handshake and speaks HTTP/2 on it when "h2" was negotiated. With nothing pre-dialed,
//     DialTLSContext dials and does that same handshake, as the transport would itself:
//     later requests, other hosts, retries and an https proxy's own connection are
//     unchanged. (DialTLSContext is not told that a request needs HTTP/1, as a websocket
//     upgrade does; provider requests never do.) Through an http proxy the transport dials
//     the proxy with DialContext and does the target's TLS itself over CONNECT, as before.
//   - A pre-dial that fails, in the dial or the handshake (an untrusted certificate, a wrong
//     host), is silent. A request that finds the pre-dial still in flight waits for it (or
//     for its own context); if it fails the request reports its error, so an unreachable
//     host or a bad certificate costs one connection attempt, not two. A request that comes
//     after a pre-dial failed dials and handshakes itself, a second attempt, and reports its
//     own error, the one it reported before this package existed. Which of the two happens
//     depends on timing alone: over loopback the failed handshake usually ends first; against
//     a distant host the request usually finds it in flight. Either error names the cause.
//   - A pre-dialed connection is handed over only while it is younger than [MaxAge] and the
//     peer has not closed it; otherwise it is closed and the request dials itself. On Unix
//     the check reads the TCP socket without waiting: a plain connection must show nothing
//     (an end of stream, a reset or bytes the server sent unasked fail it). Under TLS the
//     server may speak first (TLS 1.3 session tickets, an HTTP/2 server's SETTINGS), all of
//     it encrypted, so a check through TLS would consume what the transport must read and a
//     peek cannot see past it: the check reads what is there into a buffer under the TLS
//     connection, which gives it to TLS first, and fails on an end of stream or a reset
//     behind it (or on more than 64 KiB). An unused one is closed when it reaches MaxAge or
//     when its [Ahead] is closed (the runtime's Close), whichever is first; Close waits for a
//     dial or handshake in flight, so nothing is left behind.
package predial
