package memory

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSecondsBoundMatch checks that a creation range in whole seconds
// never contradicts Match: a second Holds rejects holds no accepted
// instant, and a second Inside accepts holds no rejected one, with bounds
// and times inside seconds, before 1970 and unset.
func TestSecondsBoundMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	at := func() time.Time {
		return time.Unix(int64(r.IntN(8)-4), int64(r.IntN(4))*250e6)
	}
	for range 5000 {
		f := VectorFilter{Tenant: "a"}
		if r.IntN(3) > 0 {
			f.CreatedAfter = at()
		}
		if r.IntN(3) > 0 {
			f.CreatedBefore = at()
		}
		d := VectorDoc{Tenant: "a", CreatedAt: at()}
		s, sec, match := f.Seconds(), d.CreatedAt.Unix(), f.Match(d)
		if !s.Holds(sec) && match {
			t.Fatalf("after %v, before %v: Holds rejects %v, which Match accepts", f.CreatedAfter, f.CreatedBefore, d.CreatedAt)
		}
		if s.Inside(sec) && !match {
			t.Fatalf("after %v, before %v: Inside accepts %v, which Match rejects", f.CreatedAfter, f.CreatedBefore, d.CreatedAt)
		}
		if s.Bounded() == (f.CreatedAfter.IsZero() && f.CreatedBefore.IsZero()) {
			t.Fatalf("after %v, before %v: Bounded is %v", f.CreatedAfter, f.CreatedBefore, s.Bounded())
		}
	}
}
