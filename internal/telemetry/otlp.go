package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// OTLP protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	// ProtocolProtobuf is OTLP/HTTP with the protobuf binary encoding, the default the
	// specification asks for.
	ProtocolProtobuf = "http/protobuf"
	// ProtocolJSON is OTLP/HTTP with the protobuf JSON encoding.
	ProtocolJSON = "http/json"
	// ProtocolGRPC is refused: rein links no gRPC (see newOTLPExporter).
	ProtocolGRPC = "grpc"
)

// DefaultOTLPEndpoint is where spans go when no OTEL_EXPORTER_OTLP_*ENDPOINT is set.
const DefaultOTLPEndpoint = "http://localhost:4318/v1/traces"

// otlpExporter is an Exporter that POSTs each batch of spans as one OTLP
// ExportTraceServiceRequest, protobuf- or JSON-encoded.
type otlpExporter struct {
	url     string
	display string // url without credentials or query, for error messages
	json    bool   // http/json rather than http/protobuf
	headers map[string]string
	gzip    bool
	client  *http.Client
}

// otlpEnv reads the traces-specific variable OTEL_EXPORTER_OTLP_TRACES_<name> if set, else
// OTEL_EXPORTER_OTLP_<name>, and says which one it read.
func otlpEnv(getenv func(string) string, name string) (value, variable string) {
	variable = "OTEL_EXPORTER_OTLP_TRACES_" + name
	if v := getenv(variable); v != "" {
		return v, variable
	}
	variable = "OTEL_EXPORTER_OTLP_" + name
	return getenv(variable), variable
}

// newOTLPExporter configures the exporter from the standard OTEL_EXPORTER_OTLP_* variables.
// Every error wraps ErrConfig.
func newOTLPExporter(getenv func(string) string) (*otlpExporter, error) {
	e := &otlpExporter{url: DefaultOTLPEndpoint, headers: map[string]string{}}
	switch p, v := otlpEnv(getenv, "PROTOCOL"); p {
	case "", ProtocolProtobuf:
	case ProtocolJSON:
		e.json = true
	case ProtocolGRPC:
		return nil, fmt.Errorf("%w: %s=grpc: rein exports OTLP over HTTP only; set %s (the default) or %s and point the endpoint at the collector's OTLP/HTTP port (4318)",
			ErrConfig, v, ProtocolProtobuf, ProtocolJSON)
	default:
		return nil, fmt.Errorf("%w: %s=%s: want %s (the default) or %s", ErrConfig, v, p, ProtocolProtobuf, ProtocolJSON)
	}
	endpointVar := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	if v := getenv(endpointVar); v != "" {
		e.url = v
	} else if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		endpointVar, e.url = "OTEL_EXPORTER_OTLP_ENDPOINT", strings.TrimRight(v, "/")+"/v1/traces"
	}
	u, err := url.Parse(e.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The value itself is not repeated: an endpoint can carry credentials.
		return nil, fmt.Errorf("%w: %s is not an http:// or https:// URL with a host", ErrConfig, endpointVar)
	}
	e.display = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	if err := e.parseHeaders(getenv); err != nil {
		return nil, err
	}
	timeout := 10 * time.Second
	if t, v := otlpEnv(getenv, "TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%w: %s=%s: want a number of milliseconds (0: no limit but the flush deadline)", ErrConfig, v, t)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	switch c, v := otlpEnv(getenv, "COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("%w: %s=%s: want gzip or none", ErrConfig, v, c)
	}
	tlsConf, err := otlpTLS(getenv)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf
	}
	e.client = &http.Client{Transport: tr, Timeout: timeout}
	return e, nil
}

// parseHeaders reads OTEL_EXPORTER_OTLP_(TRACES_)HEADERS: comma-separated key=value pairs,
// values percent-decoded. An error names the position of a bad pair, never its text: a header
// value is usually a credential.
func (e *otlpExporter) parseHeaders(getenv func(string) string) error {
	h, v := otlpEnv(getenv, "HEADERS")
	if h == "" {
		return nil
	}
	for i, pair := range strings.Split(h, ",") {
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%w: %s: entry %d is not key=value", ErrConfig, v, i+1)
		}
		if dec, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
			val = dec
		}
		e.headers[k] = strings.TrimSpace(val)
	}
	return nil
}

// otlpTLS builds the TLS configuration of OTEL_EXPORTER_OTLP_CERTIFICATE,
// _CLIENT_CERTIFICATE and _CLIENT_KEY; nil when none is set.
func otlpTLS(getenv func(string) string) (*tls.Config, error) {
	ca, caVar := otlpEnv(getenv, "CERTIFICATE")
	cert, certVar := otlpEnv(getenv, "CLIENT_CERTIFICATE")
	key, keyVar := otlpEnv(getenv, "CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrConfig, caVar, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: %s: no PEM certificate in %s", ErrConfig, caVar, ca)
		}
		conf.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%w: %s and %s go together", ErrConfig, certVar, keyVar)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%w: %s/%s: %w", ErrConfig, certVar, keyVar, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// ExportSpans sends spans in one request, retrying while the receiver says it is throttled or
// unavailable (429, 502, 503, 504) and ctx allows.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []*SpanRecord) error {
	if len(spans) == 0 {
		return nil
	}
	req := encodeSpans(spans)
	var body []byte
	if e.json {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return fmt.Errorf("otlp: encoding spans: %w", err)
		}
	} else {
		body = marshalProto(req)
	}
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("otlp: gzip: %w", err)
		}
		body = buf.Bytes()
	}
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		retry, wait, err := e.post(ctx, body)
		if err == nil || !retry || attempt == 5 {
			return err
		}
		if wait <= 0 {
			wait, backoff = backoff, backoff*2
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// post sends one request; retry says whether the failure is worth another attempt, after
// wait if the receiver said how long (Retry-After).
func (e *otlpExporter) post(ctx context.Context, body []byte) (retry bool, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("otlp: %w", err)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.json {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = e.display // no query string: it can carry a token
		}
		return ctx.Err() == nil, 0, fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, 0, nil
	}
	err = fmt.Errorf("otlp: %s: %s", e.display, resp.Status)
	if s := strings.TrimSpace(string(msg)); s != "" && printable(s) {
		err = fmt.Errorf("otlp: %s: %s: %s", e.display, resp.Status, s)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		return true, wait, err
	}
	return false, 0, err
}

// Shutdown releases the exporter's idle connections.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// printable reports whether a receiver's answer is text worth quoting in an error (a protobuf
// google.rpc.Status is not).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}
