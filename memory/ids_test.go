package memory

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Never commit to main.", "never commit to main"},
		{"  Always   use\tUTC!! ", "always use utc"},
		{"报表用 UTC 时间。", "报表用utc时间"},
		{"报表用UTC时间", "报表用utc时间"},
		{"ＵＴＣ　ｔｉｍｅ", "utc time"}, // full-width folds to half-width
		{"use gbk, not utf-8", "use gbk, not utf-8"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if ContentHash(KindPreference, "报表用 UTC 时间") != ContentHash(KindPreference, "报表用UTC时间") {
		t.Error("spacing around Latin words in Chinese changes the content hash")
	}
	if ContentHash(KindPreference, "always use UTC") == ContentHash(KindPreference, "never use UTC") {
		t.Error("opposite statements share a content hash")
	}
	if ContentHash(KindPreference, "use UTC") == ContentHash(KindRule, "use UTC") {
		t.Error("the kind is not part of the content hash")
	}
}

func TestIDsDeterministic(t *testing.T) {
	if EventID("t", "s", 1) != EventID("t", "s", 1) || EventID("t", "s", 1) == EventID("t", "s", 2) {
		t.Error("EventID is not a deterministic function of its input")
	}
	if EpisodeID("a", "s") == EpisodeID("b", "s") {
		t.Error("EpisodeID ignores the tenant")
	}
	// Parts are separated, so shifting a boundary changes the ID.
	if EpisodeID("ab", "c") == EpisodeID("a", "bc") {
		t.Error("EpisodeID is ambiguous across part boundaries")
	}
}

func TestStripControls(t *testing.T) {
	in := "ok\x00 \x07bell \x1b[2Jclear \x1b]0;title\x07 \u009bcsi\tTab\nline \x7f中文"
	want := "ok bell [2Jclear ]0;title csi\tTab\nline 中文"
	if got := StripControls(in); got != want {
		t.Fatalf("StripControls = %q, want %q", got, want)
	}
	if s := "plain text, 中文\n"; StripControls(s) != s {
		t.Fatal("clean text changed")
	}
}

func TestSessionWorkflowIDIsASCII(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"sess-1", "会话-1", "sess-é", "🚀 launch", "%E4", "u", "sess-%41"} {
		w := SessionWorkflowID("acme", id)
		for i := 0; i < len(w); i++ {
			if w[i] < 0x20 || w[i] > 0x7e {
				t.Fatalf("workflow ID %q of session %q has a non-ASCII byte", w, id)
			}
		}
		if other, dup := seen[w]; dup {
			t.Fatalf("sessions %q and %q share workflow ID %q", other, id, w)
		}
		seen[w] = id
	}
	if got := SessionWorkflowID("acme", "sess-1"); got != "session-end/acme/sess-1" {
		t.Fatalf("an ASCII session's workflow ID changed: %q", got)
	}
}
