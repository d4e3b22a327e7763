package runes

import (
	"testing"
	"unicode"
)

func TestIsCJK(t *testing.T) {
	for r, want := range map[rune]bool{'中': true, 'ひ': true, 'カ': true, '한': true, 'a': false, '，': false, '1': false, 'é': false} {
		if got := IsCJK(r); got != want {
			t.Errorf("IsCJK(%q) = %v", r, got)
		}
	}
}

func TestOneLineAndClip(t *testing.T) {
	if got := OneLine("  a\n\tb   c \r\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one two three", 5, "one …"},
		{"日本語のテキスト", 4, "日本語…"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestClipLine(t *testing.T) {
	if got := ClipLine("a\n  b\tc d e", 6); got != "a b c…" {
		t.Errorf("ClipLine = %q", got)
	}
}

func TestClipWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"fits", 10, "fits"},
		// A space within the last quarter: the cut falls there.
		{"retry the upload with backoff please", 30, "retry the upload with backoff…"},
		// The comma left at the cut goes too.
		{"first part, second part of it", 14, "first part…"},
		// No space near: the cut falls at n-1 runes.
		{"supercalifragilisticexpialidocious", 10, "supercali…"},
		// Before a CJK character when no space is nearer.
		{"用 openpyxl 读取表头第三行的数据", 14, "用 openpyxl 读取…"},
	} {
		if got := ClipWords(c.in, c.n); got != c.want {
			t.Errorf("ClipWords(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestIsCJKEveryRune checks IsCJK against the Unicode tables it stands
// for, on every code point.
func TestIsCJKEveryRune(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := IsCJK(r), unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul); got != want {
			t.Fatalf("IsCJK(%U) = %v, the tables say %v", r, got, want)
		}
	}
}
