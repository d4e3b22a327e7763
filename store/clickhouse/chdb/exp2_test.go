package chdb

import (
	"os"
	"testing"
	"time"
	"unsafe"
)

func TestExpReopen(t *testing.T) {
	l, err := load(os.ExpandEnv("$HOME/.cache/hindsight/chdb/26.7.3-stable.1/libchdb.so"))
	if err != nil {
		t.Fatal(err)
	}
	guardSignals(func() { l.setSignalHandlers(0) })
	a, b := t.TempDir(), t.TempDir()
	run := func(h unsafe.Pointer, s string) {
		out, err := q(t, l, h, s, "TSV", nil)
		t.Logf("%s => %q %v", s, out, err)
	}
	start := time.Now()
	c := connect(t, l, "--path="+a)
	t.Log("connect", time.Since(start))
	h := *(*unsafe.Pointer)(c)
	run(h, "CREATE TABLE default.x (a UInt8) ENGINE = MergeTree ORDER BY a")
	run(h, "INSERT INTO default.x VALUES (1)")
	start = time.Now()
	c2 := connect(t, l, "--path="+a)
	t.Log("second connect", time.Since(start))
	guardSignals(func() { l.closeConn(c2) })
	run(h, "SELECT count() FROM default.x")
	start = time.Now()
	guardSignals(func() { l.closeConn(c) })
	t.Log("close", time.Since(start))
	c = connect(t, l, "--path="+b)
	h = *(*unsafe.Pointer)(c)
	run(h, "SELECT count() FROM system.tables WHERE database = 'default'")
	guardSignals(func() { l.closeConn(c) })
	c = connect(t, l, "--path="+a)
	h = *(*unsafe.Pointer)(c)
	run(h, "SELECT count() FROM default.x")
	run(h, "DELETE FROM default.x WHERE a = 1")
	run(h, "SELECT count() FROM default.x")
	guardSignals(func() { l.closeConn(c) })
}
