package mcp

import (
	"errors"
	"strings"
	"testing"
)

// TestExpand: ${VAR} and ${VAR:-default} expand in command, args, env, url and headers;
// "$VAR", an unclosed "${" and a reference that is no variable name stay literal; unset
// variables without a default are one error naming the server, its file and each variable.
func TestExpand(t *testing.T) {
	vars := map[string]string{"HOST": "example.com", "EMPTY": ""}
	get := func(k string) string { return vars[k] }
	s := Server{Name: "api", Source: ".mcp.json", Command: "${BIN:-npx}", Args: []string{"$HOST", "${HOST}/x", "${EMPTY:-dflt}", "${not-a-name}", "${OPEN"},
		Env: map[string]string{"A": "${HOST:-no}"}, URL: "https://${HOST}/mcp", Headers: map[string]string{"X": "v=${HOST}"}}
	got, err := Expand(s, get)
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != "npx" || strings.Join(got.Args, " ") != "$HOST example.com/x dflt ${not-a-name} ${OPEN" ||
		got.Env["A"] != "example.com" || got.URL != "https://example.com/mcp" || got.Headers["X"] != "v=example.com" {
		t.Errorf("expanded %+v", got)
	}
	if s.Args[1] != "${HOST}/x" {
		t.Error("Expand changed its argument's slice")
	}
	s.Headers = map[string]string{"Authorization": "Bearer ${TOKEN}", "Y": "${TOKEN}${EMPTY}"}
	_, err = Expand(s, get)
	if !errors.Is(err, ErrUnsetVariable) || !strings.Contains(err.Error(), "MCP server api (.mcp.json): ${TOKEN}, ${EMPTY} are not set") {
		t.Errorf("unset: %v", err)
	}
}
