package local

import "math"

// Dot is the inner product the index scores with (with AVX2 and FMA where
// the CPU has them), for benchmarks that compare a search with an exact
// scan. a and b have the same length.
func Dot(a, b []float32) float32 { return dot(a, b) }

// dot returns the inner product of a and b, which have the same length.
func dot(a, b []float32) float32 {
	if useAVX2 && len(a) >= 8 {
		return dotAVX2(a, b)
	}
	return dotGeneric(a, b)
}

// dotGeneric is the portable inner product. Four independent accumulators
// let the CPU overlap the additions; it is about 2.5x faster than a plain
// loop.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// invNorm returns 1/‖v‖, or 0 for a zero vector (whose cosine with
// anything is then 0, as memory.Cosine defines it).
func invNorm(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return 0
	}
	return float32(1 / math.Sqrt(s))
}

// unit returns v scaled to unit length (zero stays zero).
func unit(v []float32) []float32 {
	inv := invNorm(v)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// finite reports whether every component of v is a finite number.
func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// dotInt8 returns the inner product of two quantized vectors of the same
// length.
func dotInt8(a, b []int8) int32 {
	if useAVX2 && len(a) >= 16 {
		return dotInt8AVX2(a, b)
	}
	return dotInt8Generic(a, b)
}

func dotInt8Generic(a, b []int8) int32 {
	b = b[:len(a)]
	var s int32
	for i := range a {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

// quantize maps v scaled by inv (so a unit vector) to signed bytes, with
// one scale per vector chosen so that its largest component is ±127: the
// component j is then about codes[j]·scale. A quarter of the bytes of the
// float32 vector, which is what graph traversal is bound by.
func quantize(v []float32, inv float32, codes []int8) ([]int8, float32) {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x*inv))))
	}
	start := len(codes)
	codes = append(codes, make([]int8, len(v))...)
	if m == 0 {
		return codes, 0
	}
	scale := m / 127
	for j, x := range v {
		codes[start+j] = int8(math.Round(float64(x * inv / scale)))
	}
	return codes, scale
}
