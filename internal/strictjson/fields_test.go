package strictjson

import (
	"reflect"
	"strings"
	"testing"
)

type fInner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
	c int    // unexported: not a member
}

var _ = fInner{c: 1}

type fDeeper struct{ fInner }

type fOuter struct {
	B       string `json:"b"` // shadows fInner's b, though declared before it
	*fInner        // promoted: a (b is shadowed)
	Skip    int    `json:"-"`
	D       int    `json:"d,omitzero,string"`
	E       bool
	fDeeper        // a and b again, one level deeper still: both shadowed
	Named   fInner `json:"named"`
}

func TestFields(t *testing.T) {
	var got []string
	for _, f := range Fields(reflect.TypeFor[fOuter]()) {
		got = append(got, f.Name+":"+f.Type.String()+":"+strings.Join(f.Options, "+"))
	}
	want := []string{"b:string:", "a:string:", "d:int:omitzero+string", "E:bool:", "named:strictjson.fInner:"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Fields(fOuter) = %q, want %q", got, want)
	}
	f := Fields(reflect.TypeFor[fInner]())
	if len(f) != 2 || !f[1].HasOption("omitempty") || f[0].HasOption("omitempty") {
		t.Errorf("Fields(fInner) = %+v", f)
	}
}
