package strictyaml

import (
	"strings"
	"testing"
)

type cfg struct {
	Name string   `yaml:"name"`
	List []string `yaml:"list"`
	Sub  struct {
		N int `yaml:"n"`
	} `yaml:"sub"`
}

func TestDecodeRefuses(t *testing.T) {
	bomb := "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n"
	for _, c := range []struct{ name, in, want string }{
		{"unknown key", "name: x\nnope: 1\n", "c.yaml:2: field nope not found"},
		{"duplicate key", "name: x\nlist: []\nname: y\n", `c.yaml:3: duplicate key "name" (first at line 1)`},
		{"alias bomb", bomb, "c.yaml:1: anchor &a"},
		{"alias", bomb, "c.yaml:2: alias *a"},
		{"merge", "sub: {n: 1}\nx:\n  <<: {n: 2}\n", "c.yaml:3: merge key"},
		{"two documents", "name: x\n---\nname: y\n", "c.yaml:2: a second YAML document"},
		{"empty", "", "c.yaml: the file is empty"},
		{"wrong type", "name: x\nsub: {n: many}\n", "c.yaml:2: cannot unmarshal"},
		{"syntax", "name: [x\n", "c.yaml:1: did not find expected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v cfg
			_, err := Decode([]byte(c.in), "c.yaml", &v)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestDecodeAndLine(t *testing.T) {
	var v cfg
	doc, err := Decode([]byte("name: x\nlist:\n  - a\n  - b\nsub:\n  n: 3\n"), "c.yaml", &v)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "x" || len(v.List) != 2 || v.Sub.N != 3 {
		t.Fatalf("decoded %+v", v)
	}
	if got := Line(doc, "list", 1); got != 4 {
		t.Errorf("Line(list[1]) = %d, want 4", got)
	}
	if got := Line(doc, "sub", "n"); got != 6 {
		t.Errorf("Line(sub.n) = %d, want 6", got)
	}
	if got := Line(doc, "sub", "missing"); got != 5 {
		t.Errorf("Line(sub.missing) = %d, want 5 (the deepest found)", got)
	}
}
