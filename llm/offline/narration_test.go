package offline

import "testing"

// TestNarration: what an agent says it did or will do in this session,
// or proposes without having tried, is no insight; what it says of the
// work is.
func TestNarration(t *testing.T) {
	for s, want := range map[string]bool{
		"I loaded 2026-03-17 with input_format_skip_unknown_fields=1, so discount_pct is dropped for that day.": true,
		"REPLACE PARTITION is DDL-like on prod, so I've left that for the platform team.":                       true,
		"I'll rerun the export tonight.":                                                  true,
		"已用 uv add 加上 pyarrow 16.1.0。":                                                    true,
		"我已经把索引配置写进 pyproject.toml 了。":                                                    true,
		"uv does not read pip.conf, so the index must be set in UV_INDEX_URL.":            false,
		"The loader needs input_format_skip_unknown_fields=1 for files with new columns.": false,
		"uv 不读 pip.conf，索引要用 UV_INDEX_URL 配。":                                             false,
		"Quickest fix would be to add the column to raw.orders.":                          true,
		"One option is to raise the timeout to 30 s.":                                     true,
		"If I were you I would pin the version.":                                          false,
	} {
		if got := narratesOwnWork(s); got != want {
			t.Errorf("narratesOwnWork(%q) = %v, want %v", s, got, want)
		}
	}
}
