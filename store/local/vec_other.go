//go:build !amd64 || purego

package local

const useAVX2 = false

func dotAVX2(a, b []float32) float32 { return dotGeneric(a, b) }
