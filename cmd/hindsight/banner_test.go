package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestBannerNamesParts: the start-up banner says what each part is, for
// people, not as Go type names.
func TestBannerNamesParts(t *testing.T) {
	dir := t.TempDir()
	st := startTestDev(t, dir)
	defer st.Close()
	var b bytes.Buffer
	st.printEndpoints(&b)
	out := b.String()
	for _, want := range []string{"episodic store", "embedded ClickHouse (chDB 26.", "vector index", "local vector index in " + dir, "offline: learned classifiers"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	if goType := regexp.MustCompile(`\*?\b[a-z]+\.[A-Z]\w*|\b[a-z]+\.[a-z]+[A-Z]\w*`).FindString(out); goType != "" {
		t.Errorf("banner shows a Go type name %q:\n%s", goType, out)
	}
}
