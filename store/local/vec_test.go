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
