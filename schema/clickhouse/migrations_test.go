package clickhouse

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		name string
		sql  string
		want []string
	}{
		{"two", "CREATE TABLE a (x UInt8) ENGINE = Log;\nCREATE TABLE b (y UInt8) ENGINE = Log;\n", []string{
			"CREATE TABLE a (x UInt8) ENGINE = Log", "CREATE TABLE b (y UInt8) ENGINE = Log"}},
		{"semicolons in quotes", "SELECT 'a;b', \"c;d\", `e;f`; SELECT 'it\\'s;'", []string{
			"SELECT 'a;b', \"c;d\", `e;f`", "SELECT 'it\\'s;'"}},
		{"semicolons in comments", "-- one; two\nSELECT 1 /* three; */;\n-- trailing; comment\n", []string{
			"-- one; two\nSELECT 1 /* three; */"}},
		{"only comments", "-- nothing here;\n/* nor; here */", nil},
		{"no final semicolon", "SELECT 1", []string{"SELECT 1"}},
	} {
		got, err := SplitStatements(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: SplitStatements = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"SELECT 'open", "SELECT 1 /* open"} {
		if _, err := SplitStatements(bad); err == nil {
			t.Errorf("SplitStatements(%q) accepted unterminated text", bad)
		}
	}
}

func TestEmbeddedMigrations(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d: versions must count up from 1 without gaps", i, m.Version)
		}
		for _, st := range m.Statements {
			if upper := strings.ToUpper(st); strings.Contains(upper, "CREATE ") && !strings.Contains(upper, "IF NOT EXISTS") {
				t.Errorf("%04d_%s: a CREATE without IF NOT EXISTS cannot run twice:\n%s", m.Version, m.Name, st)
			}
		}
	}
}

func TestParseRejectsBadFiles(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"misnamed":  {"1_x.sql": {Data: []byte("SELECT 1")}},
		"duplicate": {"0001_a.sql": {Data: []byte("SELECT 1")}, "0001_b.sql": {Data: []byte("SELECT 1")}},
		"empty":     {"0001_a.sql": {Data: []byte("-- nothing")}},
	} {
		if _, err := parse(fsys); err == nil {
			t.Errorf("%s: parse accepted it", name)
		}
	}
}
