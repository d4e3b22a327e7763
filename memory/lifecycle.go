package memory

import (
	"math"
	"time"
)

// Lifecycle holds the confidence and decay rules. The zero value is not
// useful; start from DefaultLifecycle.
type Lifecycle struct {
	// SingleSourceCap caps the confidence of a memory backed by one episode.
	SingleSourceCap float64
	// MultiSourceCap is the cap reached with MultiSourceCount or more
	// independent episodes; caps in between are interpolated.
	MultiSourceCap   float64
	MultiSourceCount int
	// BaseBelowCap is how far below its cap a memory starts before feedback.
	BaseBelowCap float64
	// HelpedStep and HurtStep move confidence on task feedback.
	HelpedStep float64
	HurtStep   float64
	// SupersededFactor multiplies the confidence of a superseded memory.
	SupersededFactor float64

	// DecayFactor applies once per DecayPeriod without use.
	DecayFactor float64
	DecayPeriod time.Duration
	// UseBoost is added to the decay score when a memory is used.
	UseBoost float64
	// ColdBelow and ArchiveBelow are the decay thresholds.
	ColdBelow    float64
	ArchiveBelow float64
}

// DefaultLifecycle is the seeds' rule set: one source caps confidence at
// 0.6, three reach 0.9; ×0.9 per 7 days unused, +0.1 on use, cold below 0.3,
// archived below 0.1.
var DefaultLifecycle = Lifecycle{
	SingleSourceCap:  0.6,
	MultiSourceCap:   0.9,
	MultiSourceCount: 3,
	BaseBelowCap:     0.1,
	HelpedStep:       0.05,
	HurtStep:         0.1,
	SupersededFactor: 0.5,
	DecayFactor:      0.9,
	DecayPeriod:      7 * 24 * time.Hour,
	UseBoost:         0.1,
	ColdBelow:        0.3,
	ArchiveBelow:     0.1,
}

// ConfidenceCap is the highest confidence n independent sources allow.
func (l Lifecycle) ConfidenceCap(n int) float64 {
	if n <= 1 {
		return l.SingleSourceCap
	}
	if n >= l.MultiSourceCount || l.MultiSourceCount <= 1 {
		return l.MultiSourceCap
	}
	f := float64(n-1) / float64(l.MultiSourceCount-1)
	return round3(l.SingleSourceCap + f*(l.MultiSourceCap-l.SingleSourceCap))
}

// Confidence derives a memory's confidence from its evidence: the number of
// independent source episodes and the task feedback it received. It is a
// pure function of the memory, so recomputing it never drifts.
func (l Lifecycle) Confidence(m Memory) float64 {
	n := len(m.Sources)
	if n == 0 {
		n = 1 // stated directly: one piece of evidence
	}
	ceil := l.ConfidenceCap(n)
	c := ceil - l.BaseBelowCap + float64(m.Helped)*l.HelpedStep - float64(m.Hurt)*l.HurtStep
	if m.Status == StatusSuperseded {
		c *= l.SupersededFactor
	}
	return round3(math.Max(0.05, math.Min(ceil, c)))
}

// EffectiveDecay is a memory's decay score at now. The stored score Decay
// holds as of DecayAnchor; a recall after the anchor counts as a use and
// adds UseBoost; then every full DecayPeriod without use multiplies by
// DecayFactor. It is computed from timestamps alone, so sweeps that run
// twice, late or never agree. Pinned memories never decay.
func (l Lifecycle) EffectiveDecay(m Memory, now time.Time) float64 {
	d := m.Decay
	if m.Pinned {
		return d
	}
	anchor := m.DecayAnchor
	if m.LastRecalledAt.After(anchor) {
		d = math.Min(1, l.decayed(d, anchor, m.LastRecalledAt)+l.UseBoost)
		anchor = m.LastRecalledAt
	}
	return round3(l.decayed(d, anchor, now))
}

func (l Lifecycle) decayed(d float64, from, to time.Time) float64 {
	if l.DecayPeriod <= 0 || !to.After(from) {
		return d
	}
	periods := math.Floor(float64(to.Sub(from)) / float64(l.DecayPeriod))
	return d * math.Pow(l.DecayFactor, periods)
}

// Use returns m's decay state after a use at now: the effective score plus
// UseBoost, anchored at now.
func (l Lifecycle) Use(m Memory, now time.Time) (decay float64, anchor time.Time) {
	return round3(math.Min(1, l.EffectiveDecay(m, now)+l.UseBoost)), now
}

// StatusAt is the lifecycle status m should have at now. Superseded,
// forgotten and quarantined memories keep their status; pinned memories
// stay live; others are live, cold or archived by their effective decay.
func (l Lifecycle) StatusAt(m Memory, now time.Time) Status {
	switch m.Status {
	case StatusSuperseded, StatusForgotten, StatusQuarantined:
		return m.Status
	}
	if m.Pinned {
		return StatusLive
	}
	d := l.EffectiveDecay(m, now)
	switch {
	case d < l.ArchiveBelow:
		return StatusArchived
	case d < l.ColdBelow:
		return StatusCold
	}
	return StatusLive
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
