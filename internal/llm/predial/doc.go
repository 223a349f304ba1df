// Package predial opens the connection to a model provider while rein starts up, so that the
// first request does not wait for DNS and the TCP connect after its intent is durable.
//
// [Client] is rein's one HTTP client for provider requests when the caller brings none: a
// clone of [net/http.DefaultTransport] (proxy from the environment, HTTP/2, the default
// roots, the same timeouts and pool) whose connections are opened by a [Dialer]. [Start]
// dials, in the background, the address a request to a base URL would connect to; the
// Dialer's DialContext hands that connection to the transport for the first request to the
// same network and address. Only a connection is opened early: no byte of a request is
// written before the transport sends it.
//
// The contract:
//
//   - No pre-dial when the transport's Proxy names a proxy for the base URL (the request goes
//     to the proxy, which is dialed at request time as before), for a base URL that is not
//     absolute http or https, for a host that is not plain ASCII (the transport would convert
//     it), or once a connection to that address has been dialed through the Dialer (the
//     transport's pool holds it or did).
//   - https: only DNS and TCP happen early; the TLS handshake, with the transport's own TLS
//     configuration and HTTP/2 negotiation, stays at request time.
//   - A pre-dial that fails is silent. A request that finds the pre-dial still in flight
//     waits for it (or for its own context); if that dial fails the request reports its
//     error, so an unreachable host costs one dial, not two. A request that comes after a
//     pre-dial failed dials itself.
//   - A pre-dialed connection is handed over only while it is younger than [MaxAge] and the
//     peer has not closed it (on Unix a non-blocking peek finds an end of stream or a reset);
//     otherwise it is closed and the request dials itself. An unused one is closed when it
//     reaches MaxAge or when its [Ahead] is closed (the runtime's Close), whichever is first;
//     Close waits for a dial in flight, so nothing is left behind.
package predial
