package scenarios

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestMatcher(t *testing.T) {
	lesson := memory.Memory{Kind: memory.KindLesson, Content: "Use encoding='gbk' for the sales CSV.", CounterExample: "utf-8 failed with UnicodeDecodeError"}
	pref := memory.Memory{Kind: memory.KindPreference, Content: "Reports use Beijing time (UTC+8)."}
	tests := []struct {
		m    Matcher
		mem  memory.Memory
		want bool
	}{
		{Matcher{All: []string{"GBK"}}, lesson, true},                                                                                                   // case-insensitive
		{Matcher{All: []string{"unicodedecodeerror"}}, lesson, true},                                                                                    // a lesson's counter-example counts
		{Matcher{All: []string{"gbk", "sales"}}, lesson, true},                                                                                          // every string of all
		{Matcher{All: []string{"gbk", "orders"}}, lesson, false},                                                                                        // a missing one fails
		{Matcher{Any: []string{"UTC+8", "Asia/Shanghai"}}, pref, true},                                                                                  // one of any
		{Matcher{Any: []string{"Asia/Shanghai"}}, pref, false},                                                                                          // none of any
		{Matcher{Any: []string{"beijing"}, None: []string{"utc+8"}}, pref, false},                                                                       // none excludes
		{Matcher{Kind: memory.KindLesson, All: []string{"beijing"}}, pref, false},                                                                       // kind must match
		{Matcher{Kind: memory.KindPreference, All: []string{"beijing"}}, pref, true},                                                                    //
		{Matcher{All: []string{"unicodedecodeerror"}}, memory.Memory{Kind: memory.KindRule, Content: "x", CounterExample: "UnicodeDecodeError"}, false}, // only lessons show their counter-example
	}
	for i, tt := range tests {
		if got := tt.m.Matches(tt.mem); got != tt.want {
			t.Errorf("%d: %s matches %q = %v, want %v", i, tt.m, Text(tt.mem), got, tt.want)
		}
	}
}

func TestParseRefusesBadCorpora(t *testing.T) {
	for name, doc := range map[string]string{
		"version":       `{"version": 2, "scenarios": []}`,
		"duplicate id":  `{"version": 1, "scenarios": [{"id": "a", "sessions": [{"session_id": "s", "events": [{"role": "user", "content": "x"}]}]}, {"id": "a", "sessions": [{"session_id": "s", "events": [{"role": "user", "content": "x"}]}]}]}`,
		"no sessions":   `{"version": 1, "scenarios": [{"id": "a", "sessions": []}]}`,
		"bad kind":      `{"version": 1, "scenarios": [{"id": "a", "sessions": [{"session_id": "s", "events": [{"role": "user", "content": "x"}], "expect_memories": [{"kind": "memo"}]}]}]}`,
		"none and top1": `{"version": 1, "scenarios": [{"id": "a", "sessions": [{"session_id": "s", "events": [{"role": "user", "content": "x"}]}], "probes": [{"query": "q", "none": true, "top1": {"all": ["x"]}}]}]}`,
		"bad session":   `{"version": 1, "scenarios": [{"id": "a", "sessions": [{"session_id": "s", "events": [{"role": "user", "content": "x"}], "messages": [{"role": "user", "content": "y"}]}]}]}`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// fakeSystem distils every user message as a preference with its text,
// and recalls the memories containing the query's first word.
type fakeSystem struct {
	mems map[string][]memory.Memory
}

func (f *fakeSystem) EndSession(ctx context.Context, tenant string, t memory.Transcript) ([]memory.Memory, error) {
	var out []memory.Memory
	for _, e := range t.Events {
		if e.Role == memory.RoleUser {
			m := memory.Memory{ID: e.Content, Kind: memory.KindPreference, Content: e.Content, Status: memory.StatusLive}
			f.mems[tenant] = append(f.mems[tenant], m)
			out = append(out, m)
		}
	}
	return out, nil
}

func (f *fakeSystem) Memories(ctx context.Context, tenant string) ([]memory.Memory, error) {
	return f.mems[tenant], nil
}

func (f *fakeSystem) Recall(ctx context.Context, tenant string, p Probe) ([]memory.Memory, error) {
	word := strings.ToLower(strings.Fields(p.Query)[0])
	var out []memory.Memory
	for _, m := range f.mems[tenant] {
		if strings.Contains(strings.ToLower(m.Content), word) {
			out = append(out, m)
		}
	}
	return out, nil
}

const corpus = `{"version": 1, "scenarios": [
 {"id": "one", "lang": "en", "tags": ["preference", "cross-lang"], "sessions": [
   {"session_id": "s1", "events": [{"role": "user", "content": "Reports in UTC"}], "expect_memories": [{"all": ["UTC"]}, {"all": ["Beijing"]}], "max_memories": 1},
   {"session_id": "s2", "messages": [{"role": "user", "content": "Reports in Beijing time"}, {"role": "user", "content": "Invoices in EUR"}], "max_memories": 1}],
  "final": {"live": [{"all": ["EUR"]}], "not_live": [{"all": ["UTC"]}], "once": [{"all": ["Reports"]}], "max_live": 2},
  "probes": [
   {"query": "reports time zone", "top1": {"all": ["UTC"]}, "forbid": [{"all": ["Beijing"]}]},
   {"query": "invoices currency", "top3": {"all": ["EUR"]}},
   {"query": "kafka retention", "none": true}]}]}`

func TestRunScoresEveryCheck(t *testing.T) {
	c, err := Parse([]byte(corpus))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), &fakeSystem{mems: map[string][]memory.Memory{}}, c, Options{RunID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Overall
	want := map[string][2]int{ // pass, total
		"extraction": {1, 2}, "noise": {1, 2}, "final": {1, 4},
		"top1": {1, 1}, "top3": {1, 1}, "forbid": {0, 1}, "none": {1, 1}, "all": {6, 12},
	}
	got := map[string]Ratio{"extraction": o.Extraction, "noise": o.Noise, "final": o.Final, "top1": o.Top1,
		"top3": o.Top3, "forbid": o.Forbid, "none": o.None, "all": o.All}
	for k, w := range want {
		if g := got[k]; g.Pass != w[0] || g.Total != w[1] {
			t.Errorf("%s = %d/%d, want %d/%d", k, g.Pass, g.Total, w[0], w[1])
		}
	}
	if r.Sessions != 2 || len(r.Failures) != 6 {
		t.Errorf("sessions %d, failures %d (%+v), want 2 and 6", r.Sessions, len(r.Failures), r.Failures)
	}
	// Tags are per scenario, spellings folded.
	var tags []string
	for _, tg := range r.Tags {
		tags = append(tags, tg.Tag)
	}
	if strings.Join(tags, ",") != "crosslang,preference" {
		t.Errorf("tags %v", tags)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"overall", "[expect] session s1: want distil a memory with all of [\"Beijing\"]", "[forbid]", "found result 2: (preference) Reports in Beijing time", "[max_live]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestOnlyUnknownIDFails(t *testing.T) {
	c, _ := Parse([]byte(corpus))
	if _, err := Run(context.Background(), &fakeSystem{mems: map[string][]memory.Memory{}}, c, Options{Only: []string{"nope"}}); err == nil {
		t.Fatal("Run with an unknown --only ID succeeded")
	}
}

func TestTenantFor(t *testing.T) {
	a, b := TenantFor("run1", "de-parquet-timestamp-en-01"), TenantFor("run2", "de-parquet-timestamp-en-01")
	if a == b || len(a) > 64 || memory.ValidateTenant("t", a) != nil {
		t.Errorf("tenants %q %q: want distinct valid tenants per run", a, b)
	}
	if long := TenantFor("r", strings.Repeat("x", 100)+"/é"); memory.ValidateTenant("t", long) != nil {
		t.Errorf("tenant %q is not valid", long)
	}
}
