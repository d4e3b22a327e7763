package local

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDotMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 100; n++ {
		a, b := make([]float32, n), make([]float32, n+3) // b may be longer
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		for name, got := range map[string]float32{"dot": dot(a, b), "generic": dotGeneric(a, b)} {
			if math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
				t.Fatalf("%s of length %d = %v, want %v", name, n, got, want)
			}
		}
	}
}

func TestInvNorm(t *testing.T) {
	if got := invNorm([]float32{3, 4}); math.Abs(float64(got)-0.2) > 1e-7 {
		t.Fatalf("invNorm(3,4) = %v", got)
	}
	if got := invNorm(make([]float32, 4)); got != 0 {
		t.Fatalf("invNorm(0) = %v", got)
	}
	if finite([]float32{1, float32(math.NaN())}) || finite([]float32{float32(math.Inf(-1))}) || !finite([]float32{1, 2}) {
		t.Fatal("finite")
	}
}

func BenchmarkDot384(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, 384), make([]float32, 384)
	for i := range x {
		x[i], y[i] = r.Float32(), r.Float32()
	}
	var s float32
	b.Run("dispatch", func(b *testing.B) {
		for b.Loop() {
			s += dot(x, y)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			s += dotGeneric(x, y)
		}
	})
	_ = s
}

func TestDotInt8MatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 100; n++ {
		a, b := make([]int8, n), make([]int8, n+5)
		for i := range a {
			a[i] = int8(r.IntN(255) - 127)
		}
		for i := range b {
			b[i] = int8(r.IntN(255) - 127)
		}
		if got, want := dotInt8(a, b), dotInt8Generic(a, b); got != want {
			t.Fatalf("dotInt8 of length %d = %d, want %d", n, got, want)
		}
	}
	full := make([]int8, 384)
	for i := range full {
		full[i] = -127
	}
	if got := dotInt8(full, full); got != 384*127*127 {
		t.Fatalf("dotInt8 at the extremes = %d", got)
	}
}

func TestQuantizedCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		a, b := make([]float32, 384), make([]float32, 384)
		for i := range a {
			a[i] = float32(r.NormFloat64())
			b[i] = a[i] + float32(r.NormFloat64())
		}
		ca, sa := quantize(a, invNorm(a), nil)
		cb, sb := quantize(b, invNorm(b), nil)
		approx := float64(dotInt8(ca, cb)) * float64(sa) * float64(sb)
		exact := float64(dot(a, b) * invNorm(a) * invNorm(b))
		if math.Abs(approx-exact) > 0.01 {
			t.Fatalf("quantized cosine %.4f, exact %.4f", approx, exact)
		}
	}
	if codes, scale := quantize(make([]float32, 4), 0, nil); scale != 0 || len(codes) != 4 {
		t.Fatalf("quantize(0) = %v, %v", codes, scale)
	}
}

func BenchmarkDotInt8384(b *testing.B) {
	x, y := make([]int8, 384), make([]int8, 384)
	for i := range x {
		x[i], y[i] = int8(i), int8(-i)
	}
	var s int32
	for b.Loop() {
		s += dotInt8(x, y)
	}
	_ = s
}
