package chdb

import (
	"os"
	"testing"
	"time"
	"unsafe"
)

func TestExpInsertCost(t *testing.T) {
	l, _ := load(os.ExpandEnv("$HOME/.cache/hindsight/chdb/26.7.3-stable.1/libchdb.so"))
	guardSignals(func() { l.setSignalHandlers(0) })
	c := connect(t, l, "--path="+t.TempDir())
	h := *(*unsafe.Pointer)(c)
	for _, ddl := range []string{
		"CREATE TABLE a (x String, y UInt32) ENGINE = MergeTree ORDER BY y",
		"CREATE TABLE b (x String, y UInt32, INDEX i lower(x) TYPE ngrambf_v1(2, 65536, 2, 0) GRANULARITY 1) ENGINE = MergeTree ORDER BY y",
		"CREATE TABLE c (x String, y UInt32) ENGINE = ReplacingMergeTree PARTITION BY y % 12 ORDER BY y",
	} {
		if _, err := q(t, l, h, ddl, "TSV", nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range []string{"a", "b", "c"} {
		for i := 0; i < 3; i++ {
			start := time.Now()
			_, err := ins(t, l, h, "INSERT INTO "+tb+" (x, y)", "TSV", "hello\t1\n")
			t1 := time.Since(start)
			start = time.Now()
			_, err2 := q(t, l, h, "INSERT INTO "+tb+" (x, y) VALUES ('hello', 2)", "TSV", nil)
			t.Log(tb, "stream", t1, err, "values", time.Since(start), err2)
		}
	}
	out, _ := q(t, l, h, "SELECT name, value FROM system.settings WHERE name IN ('fsync_after_insert','min_bytes_for_wide_part','async_insert','wait_for_async_insert', 'insert_deduplicate')", "TSV", nil)
	t.Log(out)
	out, _ = q(t, l, h, "SELECT name, value FROM system.merge_tree_settings WHERE name IN ('fsync_after_insert','fsync_part_directory','min_bytes_for_wide_part','min_rows_for_wide_part', 'ratio_of_defaults_for_sparse_serialization')", "TSV", nil)
	t.Log(out)
}
