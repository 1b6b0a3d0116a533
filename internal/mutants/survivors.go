package mutants

// Floors are the committed mutation scores: a lab's score may not drop
// below its floor (TestScoresHoldTheirFloors).
var Floors = map[string]float64{}

// Survivors are the mutants no claim kills, per lab, each with why:
// "equivalent: …" (no claim states what it changes, and why none should)
// or "missing claim: …" (one should).
var Survivors = map[string]map[string]string{}
