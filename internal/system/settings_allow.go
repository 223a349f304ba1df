package system

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/internal/policy"
)

// AddAllowRule adds rule to permissions.allow of the settings file at path (the global one,
// $REIN_HOME/settings.json, when global; created when missing, its directory too), written
// atomically; every other key of the file and their
// order are kept. A rule the list already holds changes nothing. The file is read back as
// settings before it replaces the old one, so a file rein would refuse is never written.
func AddAllowRule(path, rule string, global bool) error {
	if _, err := policy.ParseRule(rule); err != nil {
		return err
	}
	data, err := readSmall(path)
	perm := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = []byte("{}")
	case err != nil:
		return fmt.Errorf("%w: reading %s: %w", ErrConfig, path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	top, err := objectFields(data)
	if err != nil {
		return fmt.Errorf("%w: %s: %w (fix the file, then allow again)", ErrConfig, path, err)
	}
	perms, err := objectFields(top.get("permissions", []byte("{}")))
	if err != nil {
		return fmt.Errorf("%w: %s: permissions: %w", ErrConfig, path, err)
	}
	var allow []string
	if err := json.Unmarshal(perms.get("allow", []byte("[]")), &allow); err != nil {
		return fmt.Errorf("%w: %s: permissions.allow is not a list of rules: %w", ErrConfig, path, err)
	}
	if slices.Contains(allow, rule) {
		return nil
	}
	list, err := json.Marshal(append(allow, rule))
	if err != nil {
		return err
	}
	top = top.set("permissions", perms.set("allow", list).encode())
	out := append(top.encode(), '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the settings directory: %w", err)
	}
	if err := checkSettings(path, out, global); err != nil {
		return err
	}
	if err := atomicfile.Write(path, out, perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// checkSettings reads data as the settings file path would be read, from a scratch copy
// beside it.
func checkSettings(path string, data []byte, global bool) error {
	dir := filepath.Join(filepath.Dir(path), ".check-"+filepath.Base(path))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("checking the new settings: %w", err)
	}
	defer os.RemoveAll(dir)
	probe := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(probe, data, 0o600); err != nil {
		return fmt.Errorf("checking the new settings: %w", err)
	}
	if _, err := ReadSettings(probe, global); err != nil {
		return fmt.Errorf("the settings with the new rule would not load: %w", err)
	}
	return nil
}

// fields are a JSON object's members in file order.
type fields []field

type field struct {
	key string
	val json.RawMessage
}

// objectFields decodes one JSON object, keeping its members' order and values as written.
func objectFields(data []byte) (fields, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out fields
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%q: %w", key, err)
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more than one JSON value")
	}
	return out, nil
}

func (f fields) get(key string, def []byte) []byte {
	for _, m := range f {
		if m.key == key {
			return m.val
		}
	}
	return def
}

func (f fields) set(key string, val []byte) fields {
	for i, m := range f {
		if m.key == key {
			f[i].val = val
			return f
		}
	}
	return append(f, field{key, val})
}

// encode writes the object indented by two spaces per level.
func (f fields) encode() []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, m := range f {
		if i > 0 {
			b.WriteString(",")
		}
		key, _ := json.Marshal(m.key)
		var val bytes.Buffer
		if err := json.Indent(&val, m.val, "  ", "  "); err != nil {
			val.Write(m.val)
		}
		fmt.Fprintf(&b, "\n  %s: %s", key, val.Bytes())
	}
	if len(f) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}")
	return b.Bytes()
}
