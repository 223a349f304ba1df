package telemetry

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Attr is one attribute of a span, an event or the resource. Instrumentation makes them only
// through the constructors of attr.go (see there); values are made by the unexported
// constructors below.
type Attr struct {
	Key   string
	Value Value
}

// ValueType is the type of a Value, named as OpenTelemetry names attribute types.
type ValueType int

const (
	TypeInvalid ValueType = iota
	TypeBool
	TypeInt64
	TypeFloat64
	TypeString
	TypeStringSlice
)

var typeNames = [...]string{"INVALID", "BOOL", "INT64", "FLOAT64", "STRING", "STRINGSLICE"}

func (t ValueType) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return typeNames[0]
	}
	return typeNames[t]
}

// Value is an attribute value: a bool, an int64, a float64, a string or a list of strings.
type Value struct {
	typ ValueType
	n   int64 // a bool (0 or 1) or an int64
	f   float64
	s   string
	ss  []string
}

func boolValue(b bool) Value {
	v := Value{typ: TypeBool}
	if b {
		v.n = 1
	}
	return v
}

func intValue(n int64) Value         { return Value{typ: TypeInt64, n: n} }
func floatValue(f float64) Value     { return Value{typ: TypeFloat64, f: f} }
func stringValue(s string) Value     { return Value{typ: TypeString, s: s} }
func stringsValue(ss []string) Value { return Value{typ: TypeStringSlice, ss: ss} }

func (v Value) Type() ValueType { return v.typ }
func (v Value) AsBool() bool    { return v.typ == TypeBool && v.n != 0 }
func (v Value) AsInt64() int64 {
	if v.typ != TypeInt64 {
		return 0
	}
	return v.n
}
func (v Value) AsFloat64() float64 { return v.f }
func (v Value) AsString() string   { return v.s }

// AsStringSlice returns a copy of a list value.
func (v Value) AsStringSlice() []string { return append([]string(nil), v.ss...) }

// AsInterface returns the value as a bool, int64, float64, string or []string (nil if unset).
func (v Value) AsInterface() any {
	switch v.typ {
	case TypeBool:
		return v.AsBool()
	case TypeInt64:
		return v.n
	case TypeFloat64:
		return v.f
	case TypeString:
		return v.s
	case TypeStringSlice:
		return v.AsStringSlice()
	}
	return nil
}

// MarshalJSON writes the value as JSON writes AsInterface.
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.AsInterface()) }

// String formats the value for messages and tests.
func (v Value) String() string {
	switch v.typ {
	case TypeBool:
		return strconv.FormatBool(v.AsBool())
	case TypeInt64:
		return strconv.FormatInt(v.n, 10)
	case TypeFloat64:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case TypeString:
		return v.s
	case TypeStringSlice:
		return "[" + strings.Join(v.ss, " ") + "]"
	}
	return ""
}
