package local

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
)

// crashDirEnv tells a re-executed test binary to run the crash workload in
// that directory instead of testing.
const crashDirEnv = "HINDSIGHT_LOCAL_CRASH_DIR"

const crashDim = 16

// crashOp is operation i of the deterministic crash workload: it inserts
// three new documents; every fifth operation also re-embeds a document of
// the previous operation, and every seventh deletes one written three
// operations earlier. Tenants alternate, so several partitions are written
// and checkpointed. Each operation is a single Upsert or Delete call.
type crashOp struct {
	tenant string
	docs   []memory.VectorDoc
	del    []string
}

func crashVector(id string, version int) []float32 {
	h := uint64(version)
	for _, c := range id {
		h = h*131 + uint64(c)
	}
	return storetest.Unit(rand.New(rand.NewPCG(h, 7)), crashDim)
}

func crashWorkload(i int) []crashOp {
	tenant := []string{"t0", "t1"}[i%2]
	var ops []crashOp
	var docs []memory.VectorDoc
	for j := range 3 {
		id := fmt.Sprintf("op%05d-%d", i, j)
		docs = append(docs, memory.VectorDoc{ID: id, Tenant: tenant, Vector: crashVector(id, i), Status: "live", RecallCount: i, Kind: memory.KindFact})
	}
	if i%5 == 1 && i > 0 {
		// Same tenant as operation i-2; operation i-1 wrote to the other one.
		id := fmt.Sprintf("op%05d-1", i-2)
		docs = append(docs, memory.VectorDoc{ID: id, Tenant: tenant, Vector: crashVector(id, i), Status: "live", RecallCount: i, Kind: memory.KindFact})
	}
	ops = append(ops, crashOp{tenant: tenant, docs: docs})
	if i%7 == 3 && i >= 4 {
		ops = append(ops, crashOp{tenant: []string{"t0", "t1"}[(i-4)%2], del: []string{fmt.Sprintf("op%05d-0", i-4)}})
	}
	return ops
}

// crashState is the expected content after operations 0..i: ID to version.
type crashState map[string]int

func (s crashState) apply(i int) {
	for _, op := range crashWorkload(i) {
		s.step(op)
	}
}

// step applies one call of an operation.
func (s crashState) step(op crashOp) {
	for _, d := range op.docs {
		s[d.Tenant+"/"+d.ID] = d.RecallCount
	}
	for _, id := range op.del {
		delete(s, op.tenant+"/"+id)
	}
}

// TestCrashWorkload is not a test: it is the child process of
// TestCrashKeepsAcknowledgedWrites, which sets crashDirEnv. It runs the
// workload, printing "ack N" once operation N has returned, until killed.
func TestCrashWorkload(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrashKeepsAcknowledgedWrites in a child process")
	}
	// Checkpoints every few writes, so that the kill also lands inside
	// snapshots and log rotations; a small threshold sends large
	// partitions through the graph.
	x, err := Open(Config{Dir: dir, Dim: crashDim, ExactThreshold: 16, SnapshotBytes: 16 << 10, Logger: quiet()})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	start := 0
	if b, err := os.ReadFile(dir + "/next"); err == nil {
		start, _ = strconv.Atoi(string(b))
	}
	for i := start; ; i++ {
		for _, op := range crashWorkload(i) {
			if op.docs != nil {
				err = x.Upsert(ctx, memory.CollectionMemories, op.docs)
			} else {
				err = x.Delete(ctx, memory.CollectionMemories, op.tenant, op.del)
			}
			if err != nil {
				fmt.Println("write:", err)
				os.Exit(2)
			}
		}
		fmt.Printf("ack %d\n", i) // os.Stdout is unbuffered
	}
}

func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 11))
	for round := range 3 {
		n := 150 + r.IntN(150)
		if raceEnabled {
			n /= 5
		}
		acked := runAndKill(t, dir, n)
		// The child continues from where the previous one stopped, so round
		// 2 and 3 kill a process that recovered a killed one.
		x, err := Open(Config{Dir: dir, Dim: crashDim, ExactThreshold: 16, Logger: quiet()})
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		got := crashState{}
		for _, tenant := range []string{"t0", "t1"} {
			docs, err := x.List(context.Background(), memory.CollectionMemories, memory.VectorFilter{Tenant: tenant}, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				got[tenant+"/"+d.ID] = d.RecallCount
				full, _ := x.Get(context.Background(), memory.CollectionMemories, tenant, []string{d.ID})
				if len(full) != 1 || !slices.Equal(full[0].Vector, crashVector(d.ID, d.RecallCount)) {
					t.Fatalf("round %d: %s/%s does not hold version %d's vector", round, tenant, d.ID, d.RecallCount)
				}
			}
		}
		// Every acknowledged operation must be there. Later calls may be
		// too, if the kill came between a write and its "ack": the state
		// must be exactly the workload's state after some call at or after
		// the last acknowledged operation. matched is the last operation
		// whose calls are all there.
		want := crashState{}
		for i := 0; i <= acked; i++ {
			want.apply(i)
		}
		matched := -1
		if equalStates(got, want) {
			matched = acked
		}
	search:
		for i := acked + 1; i <= acked+64 && matched < 0; i++ {
			ops := crashWorkload(i)
			for j, op := range ops {
				want.step(op)
				if equalStates(got, want) {
					matched = i
					if j < len(ops)-1 {
						matched = i - 1 // op i is half done; the next child redoes it
					}
					break search
				}
			}
		}
		if matched < 0 {
			acks := crashState{}
			for i := 0; i <= acked; i++ {
				acks.apply(i)
			}
			t.Fatalf("round %d: after kill -9 with %d operations acknowledged, the index holds %d documents, which is no prefix of the workload at or after it; against the acknowledged state: %s",
				round, acked+1, len(got), diffStates(got, acks))
		}
		t.Logf("round %d: %d operations acknowledged, %d recovered, %d documents", round, acked+1, matched+1, len(got))
		// A search still works and finds a recovered document.
		for key, v := range got {
			tenant, id, _ := strings.Cut(key, "/")
			hits, err := x.Search(context.Background(), memory.CollectionMemories, crashVector(id, v), memory.VectorFilter{Tenant: tenant}, 1)
			if err != nil || len(hits) != 1 || hits[0].Doc.ID != id {
				t.Fatalf("round %d: search for %s's own vector = %+v, %v", round, key, hits, err)
			}
			break
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		// The next child continues the workload after the recovered state.
		os.WriteFile(dir+"/next", []byte(strconv.Itoa(matched+1)), 0o644)
	}
}

// diffStates describes how got differs from want, briefly.
func diffStates(got, want crashState) string {
	var missing, extra, changed []string
	for k, v := range want {
		if w, ok := got[k]; !ok {
			missing = append(missing, k)
		} else if w != v {
			changed = append(changed, fmt.Sprintf("%s v%d (want v%d)", k, w, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	for _, l := range [][]string{missing, extra, changed} {
		slices.Sort(l)
	}
	short := func(l []string) []string { return l[:min(len(l), 8)] }
	return fmt.Sprintf("missing %d %v, extra %d %v, changed %d %v", len(missing), short(missing), len(extra), short(extra), len(changed), short(changed))
}

func equalStates(a, b crashState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// runAndKill runs the workload in a child process, SIGKILLs it once it has
// acknowledged at least n more operations, and returns the number of the
// last operation it acknowledged.
func runAndKill(t *testing.T, dir string, n int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWorkload$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	last, seen := -1, 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "ack "); ok {
			last, _ = strconv.Atoi(v)
			if seen++; seen >= n {
				break
			}
		} else if strings.HasPrefix(line, "open:") || strings.HasPrefix(line, "write:") {
			t.Fatalf("child: %s", line)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if seen < n {
		t.Fatalf("child stopped after %d acknowledgements: %v", seen, sc.Err())
	}
	return last
}
