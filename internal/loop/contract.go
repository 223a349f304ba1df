package loop

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/reinhq/rein/internal/artifact"
	"github.com/reinhq/rein/internal/lazyre"
	"github.com/reinhq/rein/internal/strictyaml"
)

// Contract is the control contract as written (loop YAML).
type Contract struct {
	Trigger      string         `yaml:"trigger"`
	Goal         string         `yaml:"goal"`
	Verification []Verification `yaml:"verification"`
	Stop         Stop           `yaml:"stop"`
	Memory       Memory         `yaml:"memory"`
	HumanGate    HumanGate      `yaml:"human_gate"`
}

// Verification is one independent check: an argv run without a shell, or a delivery run's
// state.
type Verification struct {
	ID          string   `yaml:"id" json:"id"`
	Run         []string `yaml:"run,omitempty" json:"run,omitempty"`
	DeliveryRun string   `yaml:"delivery_run,omitempty" json:"deliveryRun,omitempty"`
}

// Stop holds the success and failure rules and the budget.
type Stop struct {
	Success string `yaml:"success"`
	Failure string `yaml:"failure"`
	Budget  Budget `yaml:"budget"`
}

// Budget bounds the loop: rounds, tokens, cost and elapsed time (the sum of the rounds'
// durations). Zero tokens or cost means none.
type Budget struct {
	Rounds  int     `yaml:"rounds" json:"rounds"`
	Tokens  int     `yaml:"tokens,omitempty" json:"tokens,omitempty"`
	CostUSD float64 `yaml:"cost_usd,omitempty" json:"costUsd,omitempty"`
	Elapsed string  `yaml:"elapsed,omitempty" json:"elapsed,omitempty"`
}

// Memory says what checkpoints keep and what they never hold.
type Memory struct {
	Persist []string `yaml:"persist"`
	Exclude []string `yaml:"exclude"`
}

// HumanGate names the action classes (and custom command names) a person approves.
type HumanGate struct {
	RequiredFor []string `yaml:"required_for"`
	Timeout     string   `yaml:"timeout,omitempty"`
}

// Normalized is the contract as the loop enforces it; its canonical JSON is digested.
type Normalized struct {
	Trigger      Trigger        `json:"trigger"`
	Goal         string         `json:"goal"`
	Verification []Verification `json:"verification"`
	Success      string         `json:"success"`
	Failure      FailureRule    `json:"failure"`
	Budget       Budget         `json:"budget"`
	Persist      []string       `json:"persist"`
	Exclude      []string       `json:"exclude"`
	RequiredFor  []string       `json:"requiredFor"`
	GateTimeout  string         `json:"gateTimeout"`
}

// Trigger is what starts a round.
type Trigger struct {
	Kind  string   `json:"kind"` // manual, every, watch, webhook
	Every string   `json:"every,omitempty"`
	Paths []string `json:"paths,omitempty"`
}

// FailureRule stops the loop when one root cause fails Times rounds (in a row when InARow).
type FailureRule struct {
	SameRootCause int  `json:"sameRootCause"`
	InARow        bool `json:"inARow"`
}

// Action classes a human gate may name; anything else in required_for is a custom command
// name (the program a bash line runs).
var ActionClasses = []string{ClassPush, ClassRelease, ClassDelete, ClassProductionWrite, ClassOutgoingMessage, ClassPrivilegeChange}

// Action classes.
const (
	ClassPush            = "push"
	ClassRelease         = "release"
	ClassDelete          = "delete"
	ClassProductionWrite = "production_write"
	ClassOutgoingMessage = "outgoing_message"
	ClassPrivilegeChange = "privilege_change"
)

// Memory classes: what a checkpoint holds, by class.
var MemoryClasses = []string{"current_scope", "decisions", "failures", "next_action", "open_items", "artifacts", "verification"}

// Exclusion classes: secrets and raw credentials are always kept out (every checkpoint is
// scanned); transcripts never enter one; the rest drop a memory class.
var excludeOnly = []string{"secrets", "raw_credentials", "transcripts"}

// SuccessRule is the one success rule: rein's own verification, all of it, in one round.
const SuccessRule = "all verification passes"

// DefaultGateTimeout applies when human_gate.timeout is not given.
const DefaultGateTimeout = "24h"

var (
	idPattern   = lazyre.Regexp{Expr: `^[a-z][a-z0-9_-]{0,63}$`}
	failureRule = lazyre.Regexp{Expr: `^same root cause fails (\d+|once|twice|three times) times?( in a row)?$|^same root cause fails (once|twice|three times)( in a row)?$`}
)

// Loaded is a parsed, validated contract.
type Loaded struct {
	File       string
	Normalized Normalized
	Digest     artifact.Digest
}

// LoadContract reads and validates the contract at path.
func LoadContract(path string) (*Loaded, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidContract, err)
	}
	return ParseContract(data, path)
}

// ParseContract decodes data (the bytes of file) strictly, validates and normalizes it.
func ParseContract(data []byte, file string) (*Loaded, error) {
	var c Contract
	doc, err := strictyaml.Decode(data, file, &c)
	if err != nil {
		return nil, &ContractError{Err: err}
	}
	n, probs := c.normalize(doc, file)
	if len(probs) > 0 {
		return nil, &ContractError{Err: &strictyaml.Error{Problems: probs}}
	}
	return &Loaded{File: file, Normalized: n, Digest: n.digest()}, nil
}

// ContractError is an invalid contract; errors.Is(err, ErrInvalidContract).
type ContractError struct{ Err error }

func (e *ContractError) Error() string   { return "invalid loop contract:\n" + e.Err.Error() }
func (e *ContractError) Unwrap() []error { return []error{ErrInvalidContract, e.Err} }

// digest is the sha256 of the canonical JSON of n.
func (n Normalized) digest() artifact.Digest {
	data, _ := json.Marshal(n)
	return artifact.Sum(data)
}

// JSON is n's canonical encoding, indented.
func (n Normalized) JSON() []byte {
	data, _ := json.MarshalIndent(n, "", "  ")
	return data
}

// normalize validates c and returns its normalized form; doc gives lines.
func (c Contract) normalize(doc *yaml.Node, file string) (Normalized, []strictyaml.Problem) {
	var probs []strictyaml.Problem
	add := func(field, msg string, keys ...any) {
		probs = append(probs, strictyaml.Problem{File: file, Line: strictyaml.Line(doc, keys...), Field: field, Msg: msg})
	}
	n := Normalized{Goal: strings.TrimSpace(c.Goal), Success: SuccessRule}
	n.Trigger = parseTrigger(c.Trigger, func(msg string) { add("trigger", msg, "trigger") })
	if n.Goal == "" {
		add("goal", "required: what the loop is for", "goal")
	}
	n.Verification = c.verification(add)
	if s := strings.TrimSpace(c.Stop.Success); s != SuccessRule {
		add("stop.success", fmt.Sprintf("must be %q (rein's verification decides; a model's claim never counts)", SuccessRule), "stop", "success")
	}
	n.Failure = parseFailure(c.Stop.Failure, func(msg string) { add("stop.failure", msg, "stop", "failure") })
	n.Budget = c.budget(doc, add)
	n.Persist, n.Exclude = c.memory(add)
	n.RequiredFor = c.gates(add)
	n.GateTimeout = cmpOr(strings.TrimSpace(c.HumanGate.Timeout), DefaultGateTimeout)
	if d, err := time.ParseDuration(n.GateTimeout); err != nil || d <= 0 {
		add("human_gate.timeout", "must be a positive duration such as 30m or 24h", "human_gate", "timeout")
	}
	slices.SortStableFunc(probs, func(a, b strictyaml.Problem) int { return a.Line - b.Line })
	return n, probs
}

func parseTrigger(s string, bad func(string)) Trigger {
	f := strings.Fields(s)
	switch {
	case len(f) == 1 && f[0] == "manual":
		return Trigger{Kind: "manual"}
	case len(f) == 2 && f[0] == "every":
		if msg := everyProblem(f[1]); msg != "" {
			bad(msg)
		}
		return Trigger{Kind: "every", Every: f[1]}
	case len(f) >= 2 && f[0] == "watch":
		return Trigger{Kind: "watch", Paths: watchPaths(f[1:], bad)}
	case len(f) == 1 && f[0] == "webhook":
		return Trigger{Kind: "webhook"}
	}
	bad(`must be "manual", "every DURATION", "watch PATH..." or "webhook"`)
	return Trigger{}
}

func parseFailure(s string, bad func(string)) FailureRule {
	s = strings.Join(strings.Fields(s), " ")
	m := failureRule.FindStringSubmatch(s)
	if m == nil {
		bad(`must be "same root cause fails N times" (optionally "in a row"), e.g. "same root cause fails twice in a row"`)
		return FailureRule{}
	}
	word, row := m[1], m[2] != ""
	if word == "" {
		word, row = m[3], m[4] != ""
	}
	n, err := strconv.Atoi(word)
	if err != nil {
		n = map[string]int{"once": 1, "twice": 2, "three times": 3}[word]
	}
	if n < 1 {
		bad("N must be at least 1")
	}
	return FailureRule{SameRootCause: n, InARow: row}
}

func (c Contract) verification(add func(string, string, ...any)) []Verification {
	if len(c.Verification) == 0 {
		add("verification", "at least one check is required: completion is proven by verification alone", "verification")
	}
	var out []Verification
	for i, v := range c.Verification {
		f := fmt.Sprintf("verification[%d]", i)
		switch {
		case !idPattern.MatchString(v.ID):
			add(f+".id", "an id is 1-64 of a-z 0-9 _ - starting with a letter", "verification", i, "id")
		case slices.ContainsFunc(out, func(o Verification) bool { return o.ID == v.ID }):
			add(f+".id", "duplicate id "+v.ID, "verification", i, "id")
		}
		switch {
		case len(v.Run) > 0 && v.DeliveryRun != "":
			add(f, "give run or delivery_run, not both", "verification", i)
		case v.DeliveryRun != "" && v.DeliveryRun != "delivery-ready":
			add(f+".delivery_run", `the only delivery run check is "delivery-ready"`, "verification", i, "delivery_run")
		case v.DeliveryRun == "" && (len(v.Run) == 0 || v.Run[0] == ""):
			add(f+".run", "must name a program and its arguments as a list (no shell)", "verification", i)
		}
		out = append(out, Verification{ID: v.ID, Run: slices.Clone(v.Run), DeliveryRun: v.DeliveryRun})
	}
	return out
}

func (c Contract) budget(doc *yaml.Node, add func(string, string, ...any)) Budget {
	b := c.Stop.Budget
	if b.Rounds <= 0 {
		add("stop.budget.rounds", "must be a positive whole number", "stop", "budget", "rounds")
	}
	if b.Tokens < 0 {
		add("stop.budget.tokens", "must not be negative", "stop", "budget", "tokens")
	}
	if b.CostUSD < 0 {
		add("stop.budget.cost_usd", "must not be negative", "stop", "budget", "cost_usd")
	}
	if b.Elapsed != "" {
		if d, err := time.ParseDuration(b.Elapsed); err != nil || d <= 0 {
			add("stop.budget.elapsed", "must be a positive duration such as 2h", "stop", "budget", "elapsed")
		}
	}
	for _, k := range []string{"rounds", "tokens"} {
		if nd := nodeAt(doc, "stop", "budget", k); nd != nil && nd.Tag != "!!int" {
			add("stop.budget."+k, "must be a whole number", "stop", "budget", k)
		}
	}
	return b
}

func (c Contract) memory(add func(string, string, ...any)) (persist, exclude []string) {
	for i, p := range c.Memory.Persist {
		if !slices.Contains(MemoryClasses, p) {
			add(fmt.Sprintf("memory.persist[%d]", i), "unknown class "+p+" (classes: "+strings.Join(MemoryClasses, ", ")+")", "memory", "persist", i)
		}
	}
	for i, p := range c.Memory.Exclude {
		if !slices.Contains(MemoryClasses, p) && !slices.Contains(excludeOnly, p) {
			add(fmt.Sprintf("memory.exclude[%d]", i), "unknown class "+p+" (classes: "+strings.Join(append(slices.Clone(excludeOnly), MemoryClasses...), ", ")+")", "memory", "exclude", i)
		}
		if slices.Contains(c.Memory.Persist, p) {
			add(fmt.Sprintf("memory.exclude[%d]", i), p+" is also in persist", "memory", "exclude", i)
		}
	}
	persist = sortedSet(c.Memory.Persist)
	if len(persist) == 0 {
		persist = slices.Clone(MemoryClasses)
	}
	// Secrets and raw credentials are always excluded; listing them only says so.
	exclude = sortedSet(append(slices.Clone(c.Memory.Exclude), "raw_credentials", "secrets", "transcripts"))
	persist = slices.DeleteFunc(persist, func(p string) bool { return slices.Contains(exclude, p) })
	return persist, exclude
}

func (c Contract) gates(add func(string, string, ...any)) []string {
	for i, g := range c.HumanGate.RequiredFor {
		if !slices.Contains(ActionClasses, g) && !idPattern.MatchString(g) {
			add(fmt.Sprintf("human_gate.required_for[%d]", i), "an action class ("+strings.Join(ActionClasses, ", ")+") or a custom command name (1-64 of a-z 0-9 _ -)", "human_gate", "required_for", i)
		}
	}
	return sortedSet(c.HumanGate.RequiredFor)
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func nodeAt(doc *yaml.Node, keys ...string) *yaml.Node {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range keys {
		var next *yaml.Node
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
