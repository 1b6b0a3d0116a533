package report

import (
	"sort"
	"time"
)

// Earliest keeps the Keep earliest items added, by At, equal times in the
// order added, and counts every one: a table of the first few hundred of
// hundreds of thousands of records without holding them all.
type Earliest[T any] struct {
	Keep  int
	At    func(T) time.Time
	items []T
	total int
}

// Add counts v and keeps it while it may be among the earliest.
func (e *Earliest[T]) Add(v T) {
	e.total++
	e.items = append(e.items, v)
	if len(e.items) >= 4*e.Keep {
		e.trim()
	}
}

func (e *Earliest[T]) trim() {
	sort.SliceStable(e.items, func(i, j int) bool { return e.At(e.items[i]).Before(e.At(e.items[j])) })
	e.items = e.items[:min(len(e.items), e.Keep)]
}

// Items are the earliest items, in time order, and how many were added.
func (e *Earliest[T]) Items() ([]T, int) {
	e.trim()
	return e.items, e.total
}
