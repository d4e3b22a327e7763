package chdb

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
	"unsafe"
)

func q(t *testing.T, l *lib, conn unsafe.Pointer, sql, format string, params map[string]string) (string, error) {
	p := newCParams(params)
	qb := []byte(sql)
	fb := []byte(format)
	var res unsafe.Pointer
	r := guardSignals(func() {
		res = l.queryWithParamsN(conn, qb, uintptr(len(sql)), fb, uintptr(len(format)), p.names, p.nameLens, p.values, p.valueLens, p.count())
	})
	if r {
		t.Log("signals restored after query")
	}
	p.keepAlive()
	defer l.destroyQueryResult(res)
	if e := cString(l.resultError(res)); e != "" {
		return "", fmt.Errorf("%s", e)
	}
	return string(cBytes(l.resultBuffer(res), l.resultLength(res))), nil
}

func ins(t *testing.T, l *lib, conn unsafe.Pointer, sql, format string, chunks ...string) (string, error) {
	p := newCParams(nil)
	st := l.streamInsertWithParamsN(conn, []byte(sql), uintptr(len(sql)), []byte(format), uintptr(len(format)), p.names, p.nameLens, p.values, p.valueLens, 0)
	defer l.destroyInsertStream(st)
	if e := cString(l.streamInsertError(st)); e != "" {
		return "", fmt.Errorf("init: %s", e)
	}
	for _, c := range chunks {
		if rc := l.streamAppend(st, []byte(c), uintptr(len(c))); rc != 0 {
			return "", fmt.Errorf("append: %s", cString(l.streamInsertError(st)))
		}
	}
	res := l.streamDone(st)
	defer l.destroyQueryResult(res)
	if e := cString(l.resultError(res)); e != "" {
		return "", fmt.Errorf("done: %s", e)
	}
	return fmt.Sprint(l.resultRowsWritten(res)), nil
}

func connect(t *testing.T, l *lib, args ...string) unsafe.Pointer {
	var argv []*byte
	for _, a := range append([]string{"clickhouse"}, args...) {
		b := append([]byte(a), 0)
		argv = append(argv, &b[0])
	}
	var conn unsafe.Pointer
	guardSignals(func() { conn = l.connect(int32(len(argv)), argv) })
	if conn == nil {
		t.Fatal("connect failed")
	}
	return conn
}

func TestExp(t *testing.T) {
	l, err := load(os.ExpandEnv("$HOME/.cache/hindsight/chdb/26.7.3-stable.1/libchdb.so"))
	if err != nil {
		t.Fatal(err)
	}
	guardSignals(func() { l.setSignalHandlers(0) })
	dir := t.TempDir()
	c1 := connect(t, l, "--path="+dir)
	h1 := *(*unsafe.Pointer)(c1)
	c2 := connect(t, l, "--path="+dir)
	h2 := *(*unsafe.Pointer)(c2)
	run := func(h unsafe.Pointer, s string) {
		out, err := q(t, l, h, s, "TSV", nil)
		t.Logf("%s => %q %v", s, out, err)
	}
	run(h1, "SET max_threads = DEFAULT")
	run(h1, "SET max_threads = '3'")
	run(h1, "SELECT getSetting('max_threads')")
	run(h2, "SELECT getSetting('max_threads')")
	run(h1, "SET max_threads = DEFAULT")
	run(h1, "SELECT getSetting('max_threads')")
	run(h1, "CREATE DATABASE IF NOT EXISTS hs")
	run(h1, "USE hs")
	run(h1, "SELECT currentDatabase()")
	run(h2, "SELECT currentDatabase()")
	run(h1, "CREATE TABLE t (a String, b UInt32) ENGINE = MergeTree ORDER BY b SETTINGS non_replicated_deduplication_window = 100")
	out, err := ins(t, l, h1, "INSERT INTO hs.t (a, b)", "TSV", "x\\n\\ny\t1\n", "\n", "z\t2\n")
	t.Logf("insert => %q %v", out, err)
	out, err = ins(t, l, h2, "INSERT INTO hs.t (a, b)", "JSONEachRow", `{"a":"line1\n\nline3","b":3}`+"\n")
	t.Logf("insert2 => %q %v", out, err)
	run(h1, "SET insert_deduplication_token = 'tok1'")
	for i := 0; i < 2; i++ {
		out, err = ins(t, l, h1, "INSERT INTO hs.t (a, b)", "TSV", "dup\t9\n")
		t.Logf("dedup insert => %q %v", out, err)
	}
	run(h1, "SET insert_deduplication_token = DEFAULT")
	run(h1, "SELECT a, b FROM hs.t ORDER BY b")
	// readonly session
	c3 := connect(t, l, "--path="+dir)
	h3 := *(*unsafe.Pointer)(c3)
	run(h3, "SET max_result_rows = 2")
	run(h3, "SET result_overflow_mode = 'throw'")
	run(h3, "SET readonly = 1")
	run(h3, "SELECT a FROM hs.t")
	run(h3, "SELECT a FROM hs.t LIMIT 1")
	run(h3, "INSERT INTO hs.t VALUES ('w', 5)")
	run(h3, "SELECT 1 SETTINGS readonly = 0")
	run(h3, "SET readonly = 0")
	run(h1, "SELECT getSetting('readonly')")
	run(h1, "SELECT count() FROM hs.t")
	// concurrency across sessions
	start := time.Now()
	var wg sync.WaitGroup
	for _, h := range []unsafe.Pointer{h1, h2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := q(t, l, h, "SELECT sum(number) FROM numbers(10000000)", "TSV", nil); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	t.Log("concurrent", time.Since(start))
	start = time.Now()
	for i := 0; i < 40; i++ {
		q(t, l, h1, "SELECT sum(number) FROM numbers(10000000)", "TSV", nil)
	}
	t.Log("serial", time.Since(start))
	start = time.Now()
	for i := 0; i < 1000; i++ {
		q(t, l, h1, "SELECT 1", "TSV", nil)
	}
	t.Log("1000 tiny", time.Since(start))
	guardSignals(func() { l.closeConn(c3); l.closeConn(c2); l.closeConn(c1) })
}
