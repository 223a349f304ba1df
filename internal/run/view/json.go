package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// node is a JSON value with object keys in file order (a map would lose the order the
// artifact was written in).
type node struct {
	kind    kind
	members []member // kindObject
	items   []*node  // kindArray
	text    string   // kindString, kindNumber, kindBool
}

type member struct {
	key   string
	value *node
}

type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// maxDepth bounds nesting: an artifact is at most a few levels deep, and a hostile one must
// not exhaust the stack.
const maxDepth = 64

// parseJSON reads exactly one JSON value from data.
func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		s := "no"
		if t {
			s = "yes"
		}
		return &node{kind: kindBool, text: s}, nil
	case json.Number:
		return &node{kind: kindNumber, text: t.String()}, nil
	case string:
		return &node{kind: kindString, text: t}, nil
	case json.Delim:
		n := &node{kind: kindArray}
		if t == '{' {
			n.kind = kindObject
		}
		for dec.More() {
			if n.kind == kindObject {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key: k.(string), value: v})
				continue
			}
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// empty reports whether n shows as "(none)": null, or a list or object without entries.
func (n *node) empty() bool {
	switch n.kind {
	case kindNull:
		return true
	case kindArray:
		return len(n.items) == 0
	case kindObject:
		return len(n.members) == 0
	}
	return false
}

func (n *node) scalar() bool { return n.kind != kindArray && n.kind != kindObject }
