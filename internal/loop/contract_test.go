package loop

import (
	"errors"
	"strings"
	"testing"
)

func TestParseContractNormalizes(t *testing.T) {
	a, err := ParseContract([]byte(contractYAML(nil)), "loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := a.Normalized
	if n.Trigger.Kind != "manual" || n.Failure != (FailureRule{SameRootCause: 2, InARow: true}) || n.Budget.Rounds != 5 || n.GateTimeout != "1h" {
		t.Fatalf("normalized %+v", n)
	}
	if strings.Join(n.Exclude, ",") != "raw_credentials,secrets,transcripts" || strings.Join(n.RequiredFor, ",") != "delete,push" {
		t.Fatalf("exclude %v, required_for %v", n.Exclude, n.RequiredFor)
	}
	// Comments and key order do not change the digest; a value does.
	b, err := ParseContract([]byte("# a comment\n"+contractYAML(nil)), "other.yaml")
	if err != nil || b.Digest != a.Digest {
		t.Fatalf("digest %s vs %s (%v)", b.Digest, a.Digest, err)
	}
	c, _ := ParseContract([]byte(contractYAML(map[string]string{"goal": "another goal"})), "loop.yaml")
	if c.Digest == a.Digest {
		t.Fatal("a changed goal kept the digest")
	}
	d, err := ParseContract([]byte(contractYAML(map[string]string{"failure": "same root cause fails 3 times", "trigger": "every 10m", "gate": "[release, deploy-prod]"})), "loop.yaml")
	if err != nil || d.Normalized.Failure != (FailureRule{SameRootCause: 3}) || d.Normalized.Trigger.Every != "10m" {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestParseContractErrorsNameFileAndLine(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unknown key", contractYAML(nil) + "extra: 1\n", "loop.yaml:16: field extra not found"},
		{"duplicate key", "goal: a\n" + contractYAML(nil), `loop.yaml:3: duplicate key "goal" (first at line 1)`},
		{"alias bomb", "x: &a [1, 1]\ny: [*a, *a]\n" + contractYAML(nil), "loop.yaml:1: anchor &a"},
		{"trigger", contractYAML(map[string]string{"trigger": "sometimes"}), "loop.yaml:1: trigger: must be"},
		{"failure rule", contractYAML(map[string]string{"failure": "when it feels stuck"}), "loop.yaml:8: stop.failure: must be"},
		{"budget", contractYAML(map[string]string{"budget": "{rounds: 0}"}), "loop.yaml:9: stop.budget.rounds: must be a positive whole number"},
		{"fractional rounds", contractYAML(map[string]string{"budget": "{rounds: 2.5}"}), "loop.yaml:9: "},
		{"gate class", contractYAML(map[string]string{"gate": "[push, Deploy Prod]"}), "loop.yaml:14: human_gate.required_for[1]"},
		{"exclude class", contractYAML(map[string]string{"exclude": "[passwords]"}), "loop.yaml:12: memory.exclude[0]: unknown class passwords"},
		{"no verification", strings.Replace(contractYAML(nil), "  - id: unit\n    run: [sh, check.sh]\n", "  []\n", 1), "verification: at least one check"},
		{"shell string", strings.Replace(contractYAML(nil), "run: [sh, check.sh]", "run: sh check.sh", 1), "loop.yaml:5: cannot unmarshal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseContract([]byte(c.in), "loop.yaml")
			if err == nil || !errors.Is(err, ErrInvalidContract) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInvalidContract containing %q", err, c.want)
			}
		})
	}
}

func TestFingerprintStripsPlaceAndTime(t *testing.T) {
	a, sa := Fingerprint("unit", 1, "2026-01-02T03:04:05Z --- FAIL: TestX (0.01s)\n    /home/a/p/x_test.go:12: want 1, got 2\nFAIL\tpkg\t0.123s\n")
	b, _ := Fingerprint("unit", 1, "2027-11-12T13:14:15Z --- FAIL: TestX (2.50s)\n    /tmp/other/x_test.go:40: want 1, got 2\nFAIL\tpkg\t9.9s\n")
	if a != b {
		t.Fatalf("same failure, different fingerprints %s %s (signature %v)", a, b, sa)
	}
	c, _ := Fingerprint("unit", 1, "--- FAIL: TestY (0.01s)\n    x_test.go:12: want 1, got 2\n")
	d, _ := Fingerprint("lint", 1, "2026-01-02T03:04:05Z --- FAIL: TestX (0.01s)\n    /home/a/p/x_test.go:12: want 1, got 2\nFAIL\tpkg\t0.123s\n")
	if c == a || d == a {
		t.Fatal("another failing test or another check kept the fingerprint")
	}
}

// TestDecideTable provokes every row of the loop design's (README, Loops) table (the stale-context row is
// TestStaleContextRow, which needs a workspace).
func TestDecideTable(t *testing.T) {
	pass := []VerificationResult{{ID: "unit", Passed: true}}
	fail := []VerificationResult{{ID: "unit", ExitCode: 1, Fingerprint: "rc:1"}}
	cause := &RootCause{Fingerprint: "rc:1", Check: "unit", Rounds: []int{1, 2}}
	for _, c := range []struct {
		name          string
		o             outcome
		state, reason string
	}{
		{"passes", outcome{Verification: pass, Claim: ClaimProgress}, StateCompleted, ReasonVerificationPassed},
		{"recoverable", outcome{Verification: fail, Claim: ClaimProgress}, StateReady, ReasonVerificationFailed},
		{"claim contradicted", outcome{Verification: fail, Claim: ClaimDone}, StateReady, ReasonClaimContradicted},
		{"gate", outcome{Verification: pass, Gates: []GateRequest{{ID: "g1-1", Class: ClassPush}}}, StateWaitingForHuman, ReasonHumanGate},
		{"stop rule", outcome{Verification: fail, Claim: ClaimDone, Repeated: cause, Rule: FailureRule{SameRootCause: 2}}, StateBlocked, ReasonSameRootCause},
		{"unrecoverable", outcome{Verification: pass, ModelErr: errors.New("provider down")}, StateBlocked, ReasonModelFailed},
	} {
		if s, r, _ := decide(c.o); s != c.state || r != c.reason {
			t.Errorf("%s: %s (%s), want %s (%s)", c.name, s, r, c.state, c.reason)
		}
	}
}
