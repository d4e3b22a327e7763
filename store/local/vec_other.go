//go:build !amd64 || purego

package local

const useAVX2 = false

func dotAVX2(a, b []float32) float32 { return dotGeneric(a, b) }

func prefetchBytes(p *int8, n int) {}

func dotInt8AVX2(a, b []int8) int32 { return dotInt8Generic(a, b) }
