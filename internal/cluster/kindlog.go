package cluster

import (
	"fmt"

	"sigs.k8s.io/kind/pkg/log"

	"github.com/termlab/termlab/internal/progress"
)

// kindLogger routes kind's V-levelled log into our progress logger:
// V(0) lines are shown, deeper levels only with TERMLAB_VERBOSE.
type kindLogger struct{ l *progress.Logger }

func (k kindLogger) Warn(m string)                    { k.l.Warnf("kind: %s", m) }
func (k kindLogger) Warnf(f string, a ...any)         { k.l.Warnf("kind: "+f, a...) }
func (k kindLogger) Error(m string)                   { k.l.Warnf("kind error: %s", m) }
func (k kindLogger) Errorf(f string, a ...any)        { k.l.Warnf("kind error: "+f, a...) }
func (k kindLogger) V(level log.Level) log.InfoLogger { return kindInfo{k.l, level} }

type kindInfo struct {
	l     *progress.Logger
	level log.Level
}

func (i kindInfo) Enabled() bool { return i.level == 0 || i.l.Verbose }
func (i kindInfo) Info(m string) {
	if i.level == 0 {
		i.l.Infof("kind: %s", m)
	} else {
		i.l.Debugf("kind: %s", m)
	}
}
func (i kindInfo) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
