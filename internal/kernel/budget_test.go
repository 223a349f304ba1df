package kernel_test

import (
	"math"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/kernel"
	"github.com/reinhq/rein/internal/llm"
	"github.com/reinhq/rein/internal/tool"
)

func TestBudgetsMustBeFiniteAndNotNegative(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), -0.01} {
		if err := kernel.CheckCost(v); err == nil {
			t.Errorf("CheckCost(%v) accepted it", v)
		}
	}
	for _, v := range []float64{0, 0.01, 1e300} {
		if err := kernel.CheckCost(v); err != nil {
			t.Errorf("CheckCost(%v): %v", v, err)
		}
	}
	set, _ := tool.New()
	model := llm.ModelFunc(nil)
	for _, cfg := range []kernel.Config{
		{MaxCost: math.NaN()}, {MaxCost: math.Inf(1)}, {MaxCost: math.Copysign(0, -1)}, {MaxTurns: -1}, {MaxUsageTokens: -1},
	} {
		cfg.Model, cfg.Tools, cfg.Recorder = model, set, &kernel.Memory{}
		if _, err := kernel.New(cfg); err == nil || !strings.Contains(err.Error(), "Config.Max") {
			t.Errorf("New with MaxCost %v, MaxTurns %d, MaxUsageTokens %d: %v, want the budget refused",
				cfg.MaxCost, cfg.MaxTurns, cfg.MaxUsageTokens, err)
		}
	}
}
