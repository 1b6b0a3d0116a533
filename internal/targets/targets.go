// Package targets holds the bodies of termlab's commands, shared by the mage
// targets (magefiles/targets, one call each) and the termlab binary (cmd/termlab),
// so `go tool mage lab:force` and `termlab lab:force` run the same code.
// Each function takes its inputs as the mage target receives them (nil: not
// given) and writes what a person reads to w; progress goes to the logger.
package targets

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
