package kernel

import (
	"errors"
	"fmt"
	"math"
)

// CheckCost reports why v cannot be a cost budget in US dollars: a budget is a finite number,
// 0 (no limit) or positive. NaN, ±Inf (and what overflows to it), negatives and -0 are refused,
// since a comparison with them never stops a run.
func CheckCost(v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a finite number of US dollars", v)
	case v < 0 || math.Signbit(v):
		return fmt.Errorf("%v is not 0 (no limit) or a positive number of US dollars", v)
	}
	return nil
}

// checkBudgets refuses budgets that cannot bound a run.
func (c *Config) checkBudgets() error {
	if err := CheckCost(c.MaxCost); err != nil {
		return fmt.Errorf("kernel: Config.MaxCost: %w", err)
	}
	if c.MaxTurns < 0 || c.MaxUsageTokens < 0 {
		return errors.New("kernel: Config.MaxTurns and MaxUsageTokens must not be negative (0: no limit)")
	}
	return nil
}
