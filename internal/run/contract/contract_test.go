package contract

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// fakeSecret builds a GitHub-token-shaped string at test time, so that the repository holds no
// string a scanner would flag.
func fakeSecret(t *testing.T) string {
	t.Helper()
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 36)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return "gh" + "p_" + string(b)
}

// tokenShape matches a whole fake token; a refusal must never repeat one.
var tokenShape = regexp.MustCompile(`gh[pousr]_[0-9A-Za-z]{36}`)

// doc is a contract document as a generic tree, edited per case and then encoded.
type doc = map[string]any

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func list(n int, f func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

var packRefs = NewRefs("requirement", "profile", "preflight")

func minimalResearch() doc {
	return doc{"stage": "research", "establishedEvidence": []any{}, "remainingUnknowns": []any{},
		"requiredEvidenceUnavailable": []any{}, "clarificationQuestions": []any{}}
}

// maximalResearch fills every list to MaxItems where the document cap allows (64 statements
// of 3900 bytes stay under MaxDocumentBytes).
func maximalResearch() doc {
	return doc{
		"stage": "research",
		"establishedEvidence": list(MaxItems, func(i int) any {
			return doc{"id": fmt.Sprintf("e%d", i), "statement": strings.Repeat("s", 3900), "references": []any{"requirement", "profile"}}
		}),
		"remainingUnknowns": []any{
			doc{"id": "u1", "description": "which database", "required": true, "references": []any{"preflight"}},
			doc{"id": "u2", "description": "naming", "required": false},
		},
		"requiredEvidenceUnavailable": []any{doc{"id": "n1", "description": "no schema dump"}},
		"clarificationQuestions":      []any{doc{"id": "q1", "question": "Which database?", "unknownIds": []any{"u1", "u2"}}},
	}
}

func minimalSpec() doc {
	return doc{"title": "Add export", "inputReferences": []any{"requirement"}, "sections": []any{
		doc{"id": "s1", "title": "Behaviour", "body": "", "items": []any{doc{"id": "a1", "kind": "acceptance", "statement": "exports CSV"}}},
	}}
}

func maximalSpec() doc {
	return doc{"title": strings.Repeat("T", 512), "inputReferences": []any{"requirement", "profile", "preflight"},
		"sections": list(8, func(i int) any {
			return doc{"id": fmt.Sprintf("s%d", i), "title": "Section", "body": strings.Repeat("b", 16384), "items": list(MaxItems, func(j int) any {
				kind := []string{ItemRequirement, ItemAcceptance, ItemConstraint}[j%3]
				return doc{"id": fmt.Sprintf("s%d.i%d", i, j), "kind": kind, "statement": "statement"}
			})}
		})}
}

var planRefs = packRefs.WithSpecItems("r1", "a1")

func minimalPlan() doc {
	return doc{"tickets": []any{doc{"id": "t1", "title": "Do it", "specItemIds": []any{"r1", "a1"}, "dependsOn": []any{}}}}
}

func maximalPlan() doc {
	return doc{"tickets": list(MaxItems, func(i int) any {
		deps := []any{}
		if i > 0 {
			deps = list(i, func(j int) any { return fmt.Sprintf("t%d", j) })
		}
		return doc{"id": fmt.Sprintf("t%d", i), "title": "Ticket", "specItemIds": []any{"r1", "a1"}, "dependsOn": deps}
	})}
}

type tcase struct {
	name string
	raw  func(t *testing.T) []byte
	refs Refs
	want []Code // codes that must all be reported; empty means accepted
	path string // path of the first wanted code, when set
}

func edit(base func() doc, f func(t *testing.T, d doc)) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		d := base()
		f(t, d)
		return mustJSON(t, d)
	}
}

func raw(s string) func(*testing.T) []byte { return func(*testing.T) []byte { return []byte(s) } }

func at(d doc, key string, i int) doc { return d[key].([]any)[i].(doc) }

func runCases(t *testing.T, k Kind, cases []tcase) {
	t.Helper()
	c, err := For(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := c.Validate(tc.raw(t), tc.refs)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if a.Kind != k || !strings.HasPrefix(a.Digest, "sha256:") || len(a.JSON) == 0 {
					t.Fatalf("accepted = %+v", a)
				}
				return
			}
			if a != nil || err == nil {
				t.Fatalf("accepted, want %v", tc.want)
			}
			e, ok := IsRefusal(err)
			if !ok || !errors.Is(err, ErrRefused) {
				t.Fatalf("error %T %v is not a refusal", err, err)
			}
			for _, w := range tc.want {
				if !e.Has(w) {
					t.Errorf("missing code %s in:\n%v", w, err)
				}
			}
			if tc.path != "" {
				for _, p := range e.Problems {
					if p.Code == tc.want[0] && p.Path != tc.path {
						t.Errorf("code %s at %s, want %s", p.Code, p.Path, tc.path)
					}
				}
			}
			if tokenShape.MatchString(err.Error()) {
				t.Errorf("the refusal repeats a secret: %v", err)
			}
		})
	}
}

// commonCases are the form checks every contract shares, built on its minimal document.
func commonCases(k Kind, base func() doc, refs Refs, listKey string, item func(i int) any) []tcase {
	firstKey := ""
	for key := range base() {
		if firstKey == "" || key < firstKey {
			firstKey = key
		}
	}
	return []tcase{
		{name: "valid minimal", raw: edit(base, func(*testing.T, doc) {}), refs: refs},
		{name: "extra key", raw: edit(base, func(_ *testing.T, d doc) { d["notes"] = "x" }), refs: refs, want: []Code{CodeUnknownKey}, path: "notes"},
		{name: "case-mismatched key", raw: edit(base, func(_ *testing.T, d doc) {
			d[strings.ToUpper(firstKey[:1])+firstKey[1:]] = d[firstKey]
			delete(d, firstKey)
		}), refs: refs, want: []Code{CodeKeyCase, CodeMissingField}},
		{name: "duplicate key", raw: func(t *testing.T) []byte {
			b := mustJSON(t, base())
			return append([]byte(fmt.Sprintf(`{%q:%s,`, firstKey, mustJSON(t, base()[firstKey]))), b[1:]...)
		}, refs: refs, want: []Code{CodeMalformed}},
		{name: "missing required key", raw: edit(base, func(_ *testing.T, d doc) { delete(d, firstKey) }), refs: refs, want: []Code{CodeMissingField}, path: firstKey},
		{name: "null list", raw: edit(base, func(_ *testing.T, d doc) { d[listKey] = nil }), refs: refs, want: []Code{CodeWrongType}, path: listKey},
		{name: "65 items", raw: edit(base, func(_ *testing.T, d doc) { d[listKey] = list(MaxItems+1, item) }), refs: refs, want: []Code{CodeTooManyItems}, path: listKey},
		{name: "oversize document", raw: func(t *testing.T) []byte {
			return []byte(`{"x":"` + strings.Repeat("a", MaxDocumentBytes) + `"}`)
		}, refs: refs, want: []Code{CodeTooLarge}},
		{name: "not an object", raw: raw(`[]`), refs: refs, want: []Code{CodeWrongType}},
		{name: "trailing data", raw: func(t *testing.T) []byte { return append(mustJSON(t, base()), " {}"...) }, refs: refs, want: []Code{CodeMalformed}},
		{name: "invalid UTF-8", raw: raw("{\"stage\":\"\xff\"}"), refs: refs, want: []Code{CodeMalformed}},
	}
}

func TestResearch(t *testing.T) {
	item := func(i int) any {
		return doc{"id": fmt.Sprintf("x%d", i), "statement": "s", "references": []any{"requirement"}}
	}
	cases := commonCases(KindResearch, minimalResearch, packRefs, "establishedEvidence", item)
	cases = append(cases,
		tcase{name: "valid maximal", raw: edit(maximalResearch, func(*testing.T, doc) {}), refs: packRefs},
		tcase{name: "oversize string", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "establishedEvidence", 3)["statement"] = strings.Repeat("s", 4097)
		}), refs: packRefs, want: []Code{CodeStringTooLarge}, path: "establishedEvidence[3].statement"},
		tcase{name: "fake secret", raw: edit(maximalResearch, func(t *testing.T, d doc) {
			at(d, "clarificationQuestions", 0)["question"] = "is " + fakeSecret(t) + " the token?"
		}), refs: packRefs, want: []Code{CodeSecret}, path: "clarificationQuestions[0].question"},
		tcase{name: "fake secret in a key", raw: edit(minimalResearch, func(t *testing.T, d doc) { d[fakeSecret(t)] = 1 }), refs: packRefs, want: []Code{CodeSecret}},
		tcase{name: "unbound provenance", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "establishedEvidence", 1)["references"] = []any{"requirement", "chat-history"}
		}), refs: packRefs, want: []Code{CodeResearchProvenanceUnbound}, path: "establishedEvidence[1].references[1]"},
		tcase{name: "unbound unknown provenance", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "remainingUnknowns", 0)["references"] = []any{"elsewhere"}
		}), refs: packRefs, want: []Code{CodeResearchProvenanceUnbound}, path: "remainingUnknowns[0].references[0]"},
		tcase{name: "empty pack binds nothing", raw: edit(maximalResearch, func(*testing.T, doc) {}), want: []Code{CodeResearchProvenanceUnbound}},
		tcase{name: "evidence without provenance", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "establishedEvidence", 0)["references"] = []any{}
		}), refs: packRefs, want: []Code{CodeResearchProvenanceMissing}, path: "establishedEvidence[0].references"},
		tcase{name: "required unknown not asked", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "clarificationQuestions", 0)["unknownIds"] = []any{"u2"}
		}), refs: packRefs, want: []Code{CodeResearchUnknownUnasked}, path: "remainingUnknowns[0]"},
		tcase{name: "unknown without required flag", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			delete(at(d, "remainingUnknowns", 1), "required")
		}), refs: packRefs, want: []Code{CodeMissingField}, path: "remainingUnknowns[1].required"},
		tcase{name: "question naming no unknown", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "clarificationQuestions", 0)["unknownIds"] = []any{"u1", "u9"}
		}), refs: packRefs, want: []Code{CodeResearchQuestionUnbound}, path: "clarificationQuestions[0].unknownIds[1]"},
		tcase{name: "question linked to nothing", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "clarificationQuestions", 0)["unknownIds"] = []any{}
		}), refs: packRefs, want: []Code{CodeResearchQuestionUnlinked, CodeResearchUnknownUnasked}},
		tcase{name: "duplicate id", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "clarificationQuestions", 0)["id"] = "e5"
		}), refs: packRefs, want: []Code{CodeDuplicateID}, path: "clarificationQuestions[0].id"},
		tcase{name: "wrong stage", raw: edit(minimalResearch, func(_ *testing.T, d doc) { d["stage"] = "Research" }), refs: packRefs, want: []Code{CodeBadEnum}, path: "stage"},
		tcase{name: "wrong types", raw: edit(maximalResearch, func(_ *testing.T, d doc) {
			at(d, "remainingUnknowns", 0)["required"] = "yes"
			at(d, "establishedEvidence", 0)["statement"] = 7
		}), refs: packRefs, want: []Code{CodeWrongType}},
		tcase{name: "blank id", raw: edit(maximalResearch, func(_ *testing.T, d doc) { at(d, "establishedEvidence", 0)["id"] = " " }), refs: packRefs, want: []Code{CodeEmptyString}},
	)
	runCases(t, KindResearch, cases)
}

// TestEscapedSecretsRefused: a secret is refused in every encoding the submission can carry it
// in — after a JSON escape, written in \u escapes, and inside a string whose decoded text is
// itself escaped (a literal "\n" before the token, where the raw text has no word boundary) —
// in a value and in a key, and the refusal never repeats it.
func TestEscapedSecretsRefused(t *testing.T) {
	tok := fakeSecret(t)
	var allU strings.Builder
	for _, c := range []byte(tok) {
		fmt.Fprintf(&allU, `\u%04x`, c)
	}
	// Each form is the raw contents of a JSON string.
	forms := map[string]string{
		`after \n`:                 `see\n` + tok,
		`after \u000a`:             `see\u000a` + tok,
		`first byte \u`:            `see \u0067` + tok[1:],
		`all \u`:                   `see ` + allU.String(),
		`after a decoded \n`:       `see\\n` + tok,
		`after a decoded \t`:       `echo \"x\\t` + tok + `\"`,
		`decoded \u first byte`:    `see \\u0067` + tok[1:],
		`in nested JSON arguments`: `{\"content\":\"line\\n` + tok + `\"}`,
	}
	var cases []tcase
	for name, contents := range forms {
		value := func(t *testing.T) []byte {
			d := minimalResearch()
			d["establishedEvidence"] = []any{doc{"id": "e1", "statement": "PLACEHOLDER", "references": []any{"requirement"}}}
			return []byte(strings.Replace(string(mustJSON(t, d)), "PLACEHOLDER", contents, 1))
		}
		key := func(t *testing.T) []byte {
			return []byte(strings.Replace(string(mustJSON(t, minimalResearch())), `"stage"`, `"`+contents+`":1,"stage"`, 1))
		}
		cases = append(cases,
			tcase{name: name + " in a value", raw: value, refs: packRefs, want: []Code{CodeSecret}, path: "establishedEvidence[0].statement"},
			tcase{name: name + " in a key", raw: key, refs: packRefs, want: []Code{CodeSecret}})
	}
	runCases(t, KindResearch, cases)
}

func TestSpecification(t *testing.T) {
	item := func(i int) any { return doc{"id": fmt.Sprintf("s%d", i), "title": "t", "body": "", "items": []any{}} }
	cases := commonCases(KindSpecification, minimalSpec, packRefs, "sections", item)
	cases = append(cases,
		tcase{name: "valid maximal", raw: edit(maximalSpec, func(*testing.T, doc) {}), refs: packRefs},
		tcase{name: "65 items in a section", raw: edit(minimalSpec, func(_ *testing.T, d doc) {
			at(d, "sections", 0)["items"] = list(MaxItems+1, func(i int) any { return doc{"id": fmt.Sprint(i), "kind": "acceptance", "statement": "s"} })
		}), refs: packRefs, want: []Code{CodeTooManyItems}, path: "sections[0].items"},
		tcase{name: "oversize string", raw: edit(minimalSpec, func(_ *testing.T, d doc) { d["title"] = strings.Repeat("T", 513) }), refs: packRefs, want: []Code{CodeStringTooLarge}, path: "title"},
		tcase{name: "fake secret", raw: edit(minimalSpec, func(t *testing.T, d doc) {
			at(d, "sections", 0)["body"] = "set TOKEN=" + fakeSecret(t)
		}), refs: packRefs, want: []Code{CodeSecret}, path: "sections[0].body"},
		tcase{name: "unbound provenance", raw: edit(minimalSpec, func(_ *testing.T, d doc) { d["inputReferences"] = []any{"requirement", "memory"} }), refs: packRefs, want: []Code{CodeSpecReferenceUnbound}, path: "inputReferences[1]"},
		tcase{name: "no input references", raw: edit(minimalSpec, func(_ *testing.T, d doc) { d["inputReferences"] = []any{} }), refs: packRefs, want: []Code{CodeSpecNoReferences}},
		tcase{name: "no sections", raw: edit(minimalSpec, func(_ *testing.T, d doc) { d["sections"] = []any{} }), refs: packRefs, want: []Code{CodeSpecNoSections}},
		tcase{name: "no acceptance criteria", raw: edit(minimalSpec, func(_ *testing.T, d doc) { at(at(d, "sections", 0), "items", 0)["kind"] = "requirement" }), refs: packRefs, want: []Code{CodeSpecNoAcceptance}},
		tcase{name: "bad item kind", raw: edit(minimalSpec, func(_ *testing.T, d doc) { at(at(d, "sections", 0), "items", 0)["kind"] = "wish" }), refs: packRefs, want: []Code{CodeBadEnum}, path: "sections[0].items[0].kind"},
		tcase{name: "duplicate item id", raw: edit(minimalSpec, func(_ *testing.T, d doc) { at(at(d, "sections", 0), "items", 0)["id"] = "s1" }), refs: packRefs, want: []Code{CodeDuplicateID}, path: "sections[0].items[0].id"},
		tcase{name: "missing body", raw: edit(minimalSpec, func(_ *testing.T, d doc) { delete(at(d, "sections", 0), "body") }), refs: packRefs, want: []Code{CodeMissingField}, path: "sections[0].body"},
	)
	runCases(t, KindSpecification, cases)
}

func TestTicketPlanning(t *testing.T) {
	item := func(i int) any {
		return doc{"id": fmt.Sprintf("t%d", i), "title": "t", "specItemIds": []any{"r1", "a1"}, "dependsOn": []any{}}
	}
	cases := commonCases(KindTicketPlanning, minimalPlan, planRefs, "tickets", item)
	ticket := func(d doc, i int) doc { return at(d, "tickets", i) }
	cases = append(cases,
		tcase{name: "valid maximal", raw: edit(maximalPlan, func(*testing.T, doc) {}), refs: planRefs},
		tcase{name: "oversize string", raw: edit(minimalPlan, func(_ *testing.T, d doc) { ticket(d, 0)["title"] = strings.Repeat("T", 513) }), refs: planRefs, want: []Code{CodeStringTooLarge}, path: "tickets[0].title"},
		tcase{name: "fake secret", raw: edit(minimalPlan, func(t *testing.T, d doc) { ticket(d, 0)["title"] = "rotate " + fakeSecret(t) }), refs: planRefs, want: []Code{CodeSecret}, path: "tickets[0].title"},
		tcase{name: "unbound spec item", raw: edit(minimalPlan, func(_ *testing.T, d doc) { ticket(d, 0)["specItemIds"] = []any{"r1", "a1", "z9"} }), refs: planRefs, want: []Code{CodePlanSpecItemUnbound}, path: "tickets[0].specItemIds[2]"},
		tcase{name: "uncovered spec item", raw: edit(minimalPlan, func(_ *testing.T, d doc) { ticket(d, 0)["specItemIds"] = []any{"r1"} }), refs: planRefs, want: []Code{CodePlanSpecItemUncovered}},
		tcase{name: "ticket without spec items", raw: edit(minimalPlan, func(_ *testing.T, d doc) {
			d["tickets"] = append(d["tickets"].([]any), doc{"id": "t2", "title": "x", "specItemIds": []any{}, "dependsOn": []any{}})
		}), refs: planRefs, want: []Code{CodePlanSpecItemsMissing}, path: "tickets[1].specItemIds"},
		tcase{name: "no tickets", raw: edit(minimalPlan, func(_ *testing.T, d doc) { d["tickets"] = []any{} }), refs: planRefs, want: []Code{CodePlanNoTickets}},
		tcase{name: "unknown dependency", raw: edit(minimalPlan, func(_ *testing.T, d doc) { ticket(d, 0)["dependsOn"] = []any{"t7"} }), refs: planRefs, want: []Code{CodePlanDependencyUnknown}, path: "tickets[0].dependsOn[0]"},
		tcase{name: "self dependency", raw: edit(minimalPlan, func(_ *testing.T, d doc) { ticket(d, 0)["dependsOn"] = []any{"t1"} }), refs: planRefs, want: []Code{CodePlanDependencyCycle}},
		tcase{name: "dependency cycle", raw: edit(maximalPlan, func(_ *testing.T, d doc) { ticket(d, 2)["dependsOn"] = []any{"t40"} }), refs: planRefs, want: []Code{CodePlanDependencyCycle}},
		tcase{name: "duplicate ticket id", raw: edit(maximalPlan, func(_ *testing.T, d doc) { ticket(d, 9)["id"] = "t3" }), refs: planRefs, want: []Code{CodeDuplicateID}, path: "tickets[9].id"},
		tcase{name: "missing dependsOn", raw: edit(minimalPlan, func(_ *testing.T, d doc) { delete(ticket(d, 0), "dependsOn") }), refs: planRefs, want: []Code{CodeMissingField}, path: "tickets[0].dependsOn"},
	)
	runCases(t, KindTicketPlanning, cases)
}

func TestEveryProblemListed(t *testing.T) {
	c, _ := For(KindTicketPlanning)
	d := minimalPlan()
	d["extra"] = 1
	at(d, "tickets", 0)["Title"] = "x"
	delete(at(d, "tickets", 0), "title")
	at(d, "tickets", 0)["dependsOn"] = nil
	_, err := c.Validate(mustJSON(t, d), planRefs)
	e, ok := IsRefusal(err)
	if !ok {
		t.Fatalf("err = %v", err)
	}
	got := map[string]Code{}
	for _, p := range e.Problems {
		got[p.Path] = p.Code
	}
	want := map[string]Code{"extra": CodeUnknownKey, "tickets[0].Title": CodeKeyCase, "tickets[0].title": CodeMissingField, "tickets[0].dependsOn": CodeWrongType}
	for p, c := range want {
		if got[p] != c {
			t.Errorf("%s: got %q, want %q (all: %v)", p, got[p], c, e.Problems)
		}
	}
}

func TestProblemCap(t *testing.T) {
	c, _ := For(KindResearch)
	d := minimalResearch()
	for i := range 100 {
		d[fmt.Sprintf("k%d", i)] = 1
	}
	_, err := c.Validate(mustJSON(t, d), packRefs)
	e, _ := IsRefusal(err)
	if e == nil || len(e.Problems) != maxProblems || e.Omitted != 100-maxProblems {
		t.Fatalf("problems %d omitted %d", len(e.Problems), e.Omitted)
	}
	if !strings.Contains(err.Error(), "and 36 more") {
		t.Fatal(err)
	}
}

func TestSchemas(t *testing.T) {
	for _, k := range Kinds {
		c, err := For(k)
		if err != nil {
			t.Fatal(err)
		}
		s := string(c.Schema())
		for _, want := range []string{`"additionalProperties":false`, `"maxItems":64`, `"maxLength"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s schema lacks %s: %s", k, want, s)
			}
		}
	}
	if _, err := For("review"); err == nil {
		t.Error("For(review) succeeded")
	}
}

func TestAcceptedCanonical(t *testing.T) {
	c, _ := For(KindSpecification)
	a, err := c.Validate([]byte(" \n"+string(mustJSON(t, minimalSpec()))+"\n"), packRefs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Validate(a.JSON, packRefs)
	if err != nil || b.Digest != a.Digest || string(b.JSON) != string(a.JSON) {
		t.Fatalf("canonical form not stable: %v %s %s", err, a.JSON, b.JSON)
	}
	if got := a.Specification.ItemIDs(); len(got) != 1 || got[0] != "a1" {
		t.Fatalf("ItemIDs = %v", got)
	}
}
