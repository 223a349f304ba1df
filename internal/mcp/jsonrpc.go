package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/reinhq/rein/internal/strictjson"
)

// maxMessage bounds one message a server sends (a line on stdio, a body or an event over
// HTTP): results carry images and resources, so it is generous, but a server cannot make
// rein buffer without end.
const maxMessage = 32 << 20

// JSON-RPC error codes rein sends or reads.
const (
	codeMethodNotFound = -32601
)

// errMalformed is wrapped by the error that ends a connection whose server sent something
// that is not a JSON-RPC 2.0 message.
var errMalformed = errors.New("malformed MCP message")

// message is one JSON-RPC 2.0 message as it arrives: a request (method and id), a
// notification (method, no id) or a response (id and result or error). Unknown members are
// ignored, as JSON-RPC asks.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

// RPCError is a JSON-RPC error a server answered a request with.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && len(e.Data) <= 512 {
		return fmt.Sprintf("%s (JSON-RPC error %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code)
}

func (m *message) isRequest() bool      { return m.Method != nil && !isNull(m.ID) }
func (m *message) isNotification() bool { return m.Method != nil && isNull(m.ID) }

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// parseMessages decodes what one line, body or event holds: a message or (JSON-RPC batches,
// which MCP 2025-03-26 allowed) an array of them. Anything else is an error wrapping
// errMalformed that quotes the beginning of what came — also JSON that is ambiguous (a key
// repeated in an object, at any depth) or not UTF-8, which encoding/json alone would read.
func parseMessages(data []byte) ([]*message, error) {
	data = bytes.TrimSpace(data)
	if err := strictjson.Check(data); err != nil {
		return nil, malformed(data, err)
	}
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(data, &batch); err != nil {
			return nil, malformed(data, err)
		}
		if len(batch) == 0 {
			return nil, malformed(data, errors.New("an empty batch"))
		}
		out := make([]*message, 0, len(batch))
		for _, raw := range batch {
			m, err := parseMessage(raw)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	m, err := parseMessage(data)
	if err != nil {
		return nil, err
	}
	return []*message{m}, nil
}

func parseMessage(data []byte) (*message, error) {
	if len(data) == 0 || data[0] != '{' {
		return nil, malformed(data, errors.New("not a JSON object"))
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, malformed(data, err)
	}
	if m.JSONRPC != "2.0" {
		return nil, malformed(data, fmt.Errorf(`"jsonrpc" is %q, not "2.0"`, m.JSONRPC))
	}
	if !isNull(m.ID) && m.ID[0] != '"' && !isNumber(m.ID) {
		return nil, malformed(data, errors.New(`"id" is neither a string nor a number`))
	}
	switch {
	case m.Method != nil:
		if *m.Method == "" {
			return nil, malformed(data, errors.New(`an empty "method"`))
		}
	case isNull(m.ID):
		return nil, malformed(data, errors.New(`neither a "method" nor an "id"`))
	case (m.Error != nil) == !isNull(m.Result):
		return nil, malformed(data, errors.New(`a response needs exactly one of "result" and "error"`))
	}
	return &m, nil
}

func isNumber(raw json.RawMessage) bool {
	_, err := strconv.ParseFloat(string(raw), 64)
	return err == nil
}

func malformed(data []byte, err error) error {
	const show = 120
	q := data
	if len(q) > show {
		q = q[:show]
	}
	return fmt.Errorf("%w: %w: %q", errMalformed, err, q)
}

// outgoing is a message rein sends.
type outgoing struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func encode(o outgoing) ([]byte, error) {
	o.JSONRPC = "2.0"
	return json.Marshal(o)
}
