//go:build race

package local

// raceEnabled shrinks the largest tests: the race detector slows the graph
// code about twentyfold.
const raceEnabled = true
