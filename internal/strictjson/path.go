package strictjson

import "strconv"

// ShowPath renders a value path for an error message; the root is "(root)".
func ShowPath(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

// KeyPath appends an object key to a value path: a.b for identifiers, a["x y"] otherwise.
func KeyPath(path, key string) string {
	if isIdent(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
