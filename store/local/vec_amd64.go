//go:build amd64 && !purego

package local

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernel; with 256-bit fused multiply-adds it
// is about six times faster than dotGeneric at 384 dimensions, which is
// most of the cost of building and searching the graph.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotAVX2 is dot for len(a) == len(b) >= 8, in vec_amd64.s.
//
//go:noescape
func dotAVX2(a, b []float32) float32
