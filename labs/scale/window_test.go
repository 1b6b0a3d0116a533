package scale

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

func TestWindowHoldsCreatesToItsSize(t *testing.T) {
	w := newWindow(2)
	ctx := context.Background()
	for i := range 2 {
		if err := w.take(ctx); err != nil {
			t.Fatalf("take %d of 2: %v", i+1, err)
		}
	}
	stop := errors.New("the wait ended")
	full, cancel := context.WithCancelCause(ctx)
	time.AfterFunc(50*time.Millisecond, func() { cancel(stop) })
	if err := w.take(full); !errors.Is(err, stop) {
		t.Fatalf("a third take on a window of 2 = %v, want the wait's cause %v", err, stop)
	}
	w.give()
	if err := w.take(ctx); err != nil {
		t.Fatalf("take after a give: %v", err)
	}
	ended, end := context.WithCancelCause(ctx)
	end(stop)
	w.give() // a free place beside an ended wait: the wait's end wins, every time
	for i := range 100 {
		if err := w.take(ended); !errors.Is(err, stop) {
			t.Fatalf("take %d with a free place after the wait ended = %v, want %v", i+1, err, stop)
		}
	}
	w.give()
	w.give() // more gives than takes: nothing to free, and it must not block
	if got := len(w); got != 0 {
		t.Fatalf("%d places taken after every give, want 0", got)
	}
}

// The figure follows the record's order: the recorded run (100 pods, under
// the window) added every pod before the first was Running; the same events
// one pod after another (each Running before the next is added) show one.
func TestMostNotRunning(t *testing.T) {
	fig := FiguresOf(load(t))
	if got := fig.MostNotRunning; got != fig.Size.Pods {
		t.Fatalf("most not Running in the recorded run = %d, want all %d", got, fig.Size.Pods)
	}
	one := load(t)
	slices.SortStableFunc(one.PodEvents, func(a, b evidence.PodEvent) int { return cmp.Compare(a.Name, b.Name) })
	if got := FiguresOf(one).MostNotRunning; got != 1 {
		t.Fatalf("each pod Running before the next is added: most not Running = %d, want 1", got)
	}
}
