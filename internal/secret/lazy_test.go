package secret

import (
	"testing"

	"github.com/reinhq/rein/internal/lazyre"
)

// TestSecretExpressionsCompile compiles every expression of the scanner, which are compiled on
// first use rather than at start-up.
func TestSecretExpressionsCompile(t *testing.T) {
	for _, r := range secretRules {
		if r.re != nil && r.re.Compiled() == nil {
			t.Errorf("rule %s: no expression", r.id)
		}
	}
	for _, re := range []*lazyre.Regexp{&pemBegin, &pemEnd} {
		_ = re.Compiled()
	}
}
