package evidence

import (
	"sort"
	"strconv"
	"time"
)

// Watch order. The API server's watch sends each object's changes in the
// order etcd committed them, each at its own resourceVersion (etcd's
// revision of the change, a decimal integer). So per object, on one watch,
// the first event is ADDED, the resourceVersions only grow, and DELETED is
// the last. The recorder adds LISTED states: a LIST's answer, when a watch
// starts and after a re-list.
//
// A gap of a watch begins a new session of it (WatchGap). A re-list at its
// end states every object again as LISTED, at its resourceVersion then:
// the one last recorded when the object did not change meanwhile (a repeat,
// not a step back), a greater one when it did. A gap that resumed from the
// last resourceVersion changes nothing in the order: the server sends every
// change after that version.
//
// The watches select by labels termlab sets when it creates an object and
// never changes, so no object leaves a watch and comes back (which a watch
// would show as DELETED, then ADDED, of one UID).

// OrderRule is one rule of an object's watch order.
type OrderRule string

const (
	// OrderAddedFirst: an object's first event is ADDED or LISTED; after
	// it, it is stated again only as LISTED, by a re-list in a later session.
	OrderAddedFirst OrderRule = "ADDED (or LISTED) first"
	// OrderVersionsRise: each event's resourceVersion is greater than the
	// object's event before, or equal to it in a re-list's LISTED repeat.
	OrderVersionsRise OrderRule = "resourceVersions strictly increasing"
	// OrderDeletedLast: nothing of an object after its DELETED. Of an
	// object recorded without a UID, an ADDED or LISTED after it is another
	// object of the same name.
	OrderDeletedLast OrderRule = "DELETED last"
)

// OrderedEvent is one watch event as the order check read it.
type OrderedEvent struct {
	Line            int // in the stream's file, from 1 (the recorder writes one event a line)
	Type            string
	ResourceVersion string
	ObservedAt      time.Time
	Session         int // from 0; each gap of the watch begins the next
}

// OrderBreak is where one object's events first break a rule: the pair
// Before → After, or After alone when it is the object's first event and no
// next event makes a pair of it.
type OrderBreak struct {
	Rule   OrderRule
	Object string // e.g. "pod slow-exit (uid 1f2e…)"
	Before *OrderedEvent
	After  OrderedEvent
}

// WatchOrder is what the order check found in one watch stream.
type WatchOrder struct {
	Source   string // WatchPods, WatchNodes, …
	File     string // events.jsonl, nodes.jsonl, …
	Events   int
	Objects  int
	Sessions int // 1 + the watch's gaps
	// Repeats are re-listed states at the resourceVersion of the object's
	// event before.
	Repeats int
	// Breaks are the first break of each object out of order, the first
	// one first.
	Breaks []OrderBreak
	// Unversioned are the objects with a resourceVersion that is not a
	// decimal integer: how their events rise is not known, and not checked.
	Unversioned []string
	// Err is a read error of the file: the events before it were checked.
	Err error
}

// WatchOrders checks the order of every watch stream the record holds
// events of, in the order of orderedStreams. Kubernetes Events are not
// among them: the record keeps no name of an Event itself, only of the
// object it is about.
func (r *Record) WatchOrders() []WatchOrder {
	var out []WatchOrder
	for _, s := range orderedStreams {
		o := WatchOrder{Source: s.source, File: s.file}
		c := newOrderCheck(r.gapStarts(s.source))
		o.Err = s.each(r, func(it watchItem) bool {
			c.add(it)
			return true
		})
		if c.line == 0 && o.Err == nil {
			continue
		}
		o.Events, o.Objects, o.Sessions = c.line, len(c.objects), len(c.gapStarts)+1
		o.Repeats, o.Breaks, o.Unversioned = c.repeats, c.breaks, c.unversioned
		out = append(out, o)
	}
	return out
}

// watchItem is one watch event of any stream, as the check needs it.
type watchItem struct {
	uid, name string // name: namespace/name when namespaced
	label     string // for people: "pod slow-exit"
	typ, rv   string
	at        time.Time
}

// orderedStreams are the watch streams whose events name their object.
var orderedStreams = []struct {
	source, file string
	each         func(r *Record, visit func(watchItem) bool) error
}{
	{WatchPods, EventsFile, func(r *Record, visit func(watchItem) bool) error {
		return r.EachPodEvent(func(e PodEvent) bool {
			return visit(watchItem{e.UID, r.Namespace + "/" + e.Name, "pod " + e.Name, e.Type, e.ResourceVersion, e.ObservedAt})
		})
	}},
	{WatchNodes, NodesFile, func(r *Record, visit func(watchItem) bool) error {
		return each(r.NodeEvents, "", nil, func(e NodeEvent) bool {
			return visit(watchItem{"", e.Name, "node " + e.Name, e.Type, e.ResourceVersion, e.ObservedAt})
		})
	}},
	{WatchNamespaces, NamespacesFile, func(r *Record, visit func(watchItem) bool) error {
		return each(r.NamespaceEvents, "", nil, func(e NamespaceEvent) bool {
			return visit(watchItem{"", e.Name, "namespace " + e.Name, e.Type, e.ResourceVersion, e.ObservedAt})
		})
	}},
	{WatchEndpointSlices, EndpointSlicesFile, func(r *Record, visit func(watchItem) bool) error {
		return each(r.EndpointSlices, "", nil, func(e EndpointSliceEvent) bool {
			return visit(watchItem{"", r.Namespace + "/" + e.Name, "EndpointSlice " + e.Name, e.Type, e.ResourceVersion, e.ObservedAt})
		})
	}},
	{WatchControllers, ControllersFile, func(r *Record, visit func(watchItem) bool) error {
		return each(r.ControllerEvents, "", nil, func(e ControllerEvent) bool {
			return visit(watchItem{e.UID, e.Pod, "controller pod " + e.Pod, e.Type, e.ResourceVersion, e.ObservedAt})
		})
	}},
}

// gapStarts are when the source's watch went down, in time order.
func (r *Record) gapStarts(source string) []time.Time {
	var out []time.Time
	for _, g := range r.Gaps {
		if g.Source == source {
			out = append(out, g.From)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// orderCheck follows one stream's objects, event by event.
type orderCheck struct {
	gapStarts   []time.Time
	line        int
	objects     map[string]*objectOrder
	repeats     int
	breaks      []OrderBreak
	unversioned []string
}

// objectOrder is one object's last event and its first break, if any.
type objectOrder struct {
	last        OrderedEvent
	broken      int  // 1 + its break's index in breaks; 0 while in order
	firstOnly   bool // its break is its first event alone, which its next event may pair
	unversioned bool
}

func newOrderCheck(gapStarts []time.Time) *orderCheck {
	return &orderCheck{gapStarts: gapStarts, objects: map[string]*objectOrder{}}
}

// session is the watch session an event observed at at belongs to. The
// recorder stamps an event when it comes off the stream, and opens a gap
// only after the stream's last event; a re-list's LISTED states come
// inside the gap, after its start: so an event after a gap's start is of
// the next session.
func (c *orderCheck) session(at time.Time) int {
	return sort.Search(len(c.gapStarts), func(i int) bool { return !c.gapStarts[i].Before(at) })
}

func (c *orderCheck) add(it watchItem) {
	c.line++
	e := OrderedEvent{Line: c.line, Type: it.typ, ResourceVersion: it.rv, ObservedAt: it.at, Session: c.session(it.at)}
	key := it.uid
	if key == "" {
		key = it.name
	}
	label := it.label
	if it.uid != "" {
		label += " (uid " + it.uid + ")"
	}
	o := c.objects[key]
	if o == nil {
		o = &objectOrder{}
		c.objects[key] = o
		if !firstState(e.Type) {
			c.breaks = append(c.breaks, OrderBreak{Rule: OrderAddedFirst, Object: label, After: e})
			o.broken, o.firstOnly = len(c.breaks), true
		}
		o.last = e
		return
	}
	before := o.last
	o.last = e
	if o.broken > 0 && !o.firstOnly {
		return
	}
	rule, ok := c.follows(o, label, before, e, it.uid == "")
	switch {
	case ok:
	case o.firstOnly:
		// The first event broke the order alone; name the pair it makes.
		c.breaks[o.broken-1] = OrderBreak{Rule: rule, Object: label, Before: &before, After: e}
	default:
		c.breaks = append(c.breaks, OrderBreak{Rule: rule, Object: label, Before: &before, After: e})
		o.broken = len(c.breaks)
	}
	o.firstOnly = false
}

// follows says whether e may follow before, the object's event before it,
// and which rule it breaks if not. byName: the object is known by its name
// alone, so after a DELETED a new object of the name may begin.
func (c *orderCheck) follows(o *objectOrder, label string, before, e OrderedEvent, byName bool) (OrderRule, bool) {
	reborn := byName && before.Type == "DELETED" && firstState(e.Type)
	switch {
	case before.Type == "DELETED" && !reborn:
		return OrderDeletedLast, false
	case firstState(e.Type) && !reborn && !(e.Type == "LISTED" && e.Session > before.Session):
		return OrderAddedFirst, false
	}
	prev, errPrev := strconv.ParseUint(before.ResourceVersion, 10, 64)
	next, errNext := strconv.ParseUint(e.ResourceVersion, 10, 64)
	if errPrev != nil || errNext != nil {
		if !o.unversioned {
			o.unversioned = true
			c.unversioned = append(c.unversioned, label)
		}
		return "", true
	}
	switch {
	case next > prev:
		return "", true
	case next == prev && e.Type == "LISTED" && e.Session > before.Session:
		c.repeats++
		return "", true
	}
	return OrderVersionsRise, false
}

func firstState(typ string) bool { return typ == "ADDED" || typ == "LISTED" }
