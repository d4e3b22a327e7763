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

// prefetchBytes starts loading n cache lines at p (in vec_amd64.s).
//
//go:noescape
func prefetchBytes(p *int8, n int)

// dotInt8AVX2 is dotInt8 for len(a) == len(b) >= 16, in vec_amd64.s.
//
//go:noescape
func dotInt8AVX2(a, b []int8) int32
