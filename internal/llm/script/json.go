package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"go.yaml.in/yaml/v4"
)

// jsonDocument parses a JSON scenario strictly into the same node tree a YAML file gives, so
// both formats share one decoder with one set of checks and messages.
//
// It does not go through the YAML parser: YAML rejects some valid JSON (the "\/" escape,
// surrogate pairs). Strictness comes from two sides: encoding/json checks the syntax here
// (trailing data included), and the node decoder rejects duplicate and unknown fields and
// matches field names case-sensitively.
func (p *parser) jsonDocument(data []byte) (*yaml.Node, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		off := -1
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			off = int(se.Offset)
		}
		e := &ParseError{File: p.file, Msg: "invalid JSON: " + err.Error()}
		if off >= 0 {
			e.Line, e.Column = lineCol(data, off)
		}
		return nil, e
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	b := &jsonBuilder{data: data, dec: dec}
	n, err := b.value()
	if err != nil {
		// Unreachable for data that json.Unmarshal accepted; reported rather than trusted.
		return nil, &ParseError{File: p.file, Msg: "invalid JSON: " + err.Error()}
	}
	return n, nil
}

type jsonBuilder struct {
	data []byte
	dec  *json.Decoder
}

// start returns the offset where the next token begins: past the previous token and any
// whitespace, commas and colons between.
func (b *jsonBuilder) start() int {
	off := int(b.dec.InputOffset())
	for off < len(b.data) && strings.IndexByte(" \t\r\n,:", b.data[off]) >= 0 {
		off++
	}
	return off
}

func (b *jsonBuilder) node(kind yaml.Kind, tag, value string, off int) *yaml.Node {
	line, col := lineCol(b.data, off)
	return &yaml.Node{Kind: kind, Tag: tag, Value: value, Line: line, Column: col}
}

func (b *jsonBuilder) value() (*yaml.Node, error) {
	off := b.start()
	tok, err := b.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n := b.node(yaml.MappingNode, "!!map", "", off)
			for b.dec.More() {
				koff := b.start()
				k, err := b.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := b.value()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, b.node(yaml.ScalarNode, "!!str", key, koff), v)
			}
			_, err := b.dec.Token() // '}'
			return n, err
		}
		n := b.node(yaml.SequenceNode, "!!seq", "", off)
		for b.dec.More() {
			v, err := b.value()
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		_, err := b.dec.Token() // ']'
		return n, err
	case string:
		return b.node(yaml.ScalarNode, "!!str", t, off), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return b.node(yaml.ScalarNode, tag, string(t), off), nil
	case bool:
		s := "false"
		if t {
			s = "true"
		}
		return b.node(yaml.ScalarNode, "!!bool", s, off), nil
	case nil:
		return b.node(yaml.ScalarNode, "!!null", "null", off), nil
	}
	return nil, errors.New("unexpected JSON token")
}
