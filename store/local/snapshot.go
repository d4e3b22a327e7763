package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/hindsight-memory/hindsight/memory"
)

// A snapshot is one partition at one log position, in one file:
//
//	"HSLX" version dim collection tenant lsn nodes m
//	per node:  live, raw vector, and for live nodes the document
//	graph:     entry, maxLevel+1, per node its level and per level its
//	           links with their distances
//	CRC-32C of everything above
//
// It is written to a temporary file, synced, and renamed over the previous
// snapshot, so a crash leaves either the old or the new one. Tombstones are
// kept, because the graph routes through them.
//
// Version 3 documents may carry a sparse vector (a flag bit of the
// document, see codec.go); version 2 snapshots, written before, read the
// same way with none. Older binaries refuse version 3 instead of
// misreading it.

const (
	snapMagic   = "HSLX"
	snapVersion = 3
	// snapOldest is the oldest version readSnapshot reads.
	snapOldest = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func snapshotPath(dir string, coll memory.Collection, tenant string) string {
	return filepath.Join(dir, "snap", string(coll), tenant+".snap")
}

// writeSnapshot writes p's state as of lsn and returns the file size. The
// caller holds p.writeMu, so the state cannot change underneath.
func writeSnapshot(dir string, p *partition, lsn uint64, dim int) (int64, error) {
	path := snapshotPath(dir, p.coll, p.tenant)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp) // a no-op after the rename
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	st := p.st
	g := st.graph

	b := []byte(snapMagic)
	b = binary.LittleEndian.AppendUint32(b, snapVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(dim))
	b = appendString(b, string(p.coll))
	b = appendString(b, p.tenant)
	b = binary.LittleEndian.AppendUint64(b, lsn)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(st.live)))
	b = binary.LittleEndian.AppendUint32(b, uint32(g.m))
	w.Write(b)
	for i, live := range st.live {
		b = b[:0]
		if live {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = appendVector(b, st.vecs.at(uint32(i)))
		if live {
			b = appendDoc(b, st.docs[i])
		}
		w.Write(b)
	}
	b = binary.LittleEndian.AppendUint32(b[:0], g.entry)
	b = appendUvarint(b, uint64(g.maxLevel+1))
	w.Write(b)
	for i, level := range g.levels {
		b = append(b[:0], level)
		for l := 0; l <= int(level); l++ {
			links, ds := g.neighbors(uint32(i), l), g.dists(uint32(i), l)
			b = appendUvarint(b, uint64(len(links)))
			for j, n := range links {
				b = binary.LittleEndian.AppendUint32(b, n)
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(ds[j]))
			}
		}
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	return size, syncDir(filepath.Dir(path))
}

// readSnapshot loads a snapshot written by writeSnapshot, checking its
// checksum before anything of it is used.
func readSnapshot(path string, dim int, hp HNSWConfig) (*partition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() < 4 {
		return nil, errors.New("file is too short")
	}
	crc := crc32.New(castagnoli)
	r := bufio.NewReaderSize(io.TeeReader(io.LimitReader(f, info.Size()-4), crc), 1<<20)
	d := &decoder{r: r}

	if string(d.bytes(4)) != snapMagic {
		return nil, errors.New("not a hindsight snapshot")
	}
	if v := d.uint32(); (v < snapOldest || v > snapVersion) && d.err == nil {
		return nil, fmt.Errorf("snapshot version %d is not supported (want %d to %d)", v, snapOldest, snapVersion)
	}
	if got := int(d.uint32()); got != dim && d.err == nil {
		return nil, fmt.Errorf("snapshot holds vectors of dimension %d, the index has dimension %d", got, dim)
	}
	p := &partition{coll: memory.Collection(d.string()), tenant: d.string()}
	p.lastLSN = d.uint64()
	p.durableLSN = p.lastLSN
	nodes := d.uint64()
	hp.M = int(d.uint32()) // the graph keeps the M it was built with
	if d.err != nil {
		return nil, d.err
	}
	if hp.M < 2 || hp.M > 1024 || nodes > 1<<32-1 {
		return nil, fmt.Errorf("snapshot header is out of range (m=%d, nodes=%d)", hp.M, nodes)
	}
	st := newState(dim, hp, p.tenant)
	var v []float32
	for i := uint32(0); uint64(i) < nodes && d.err == nil; i++ {
		live := d.byte() == 1
		v = d.vector(v, dim)
		st.vecs.add(v)
		st.addSlot()
		if live {
			doc := d.doc(p.tenant)
			st.setDoc(i, doc)
			st.live[i] = true
			st.byID[doc.ID] = i
			st.nLive++
		}
	}
	g := st.graph
	entry := d.uint32()
	g.maxLevel = int(d.uvarint()) - 1
	g.entry = entry
	for i := uint32(0); uint64(i) < nodes && d.err == nil; i++ {
		level := int(d.byte())
		g.addNodeAt(i, level)
		for l := 0; l <= level && d.err == nil; l++ {
			b, ds := g.block(i, l), g.dists(i, l)
			n := d.uvarint()
			if n > uint64(len(b)-1) {
				return nil, fmt.Errorf("node %d has %d links at level %d, at most %d fit", i, n, l, len(b)-1)
			}
			b[0] = uint32(n)
			for j := range int(n) {
				b[1+j] = d.uint32()
				ds[j] = math.Float32frombits(d.uint32())
			}
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if g.maxLevel >= 0 && (uint64(entry) >= nodes || g.maxLevel > 31) {
		return nil, fmt.Errorf("graph entry %d at level %d is out of range", entry, g.maxLevel)
	}
	if n, _ := io.Copy(io.Discard, r); n != 0 {
		return nil, fmt.Errorf("%d bytes of trailing data", n)
	}
	var sum [4]byte
	if _, err := io.ReadFull(f, sum[:]); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(sum[:]) != crc.Sum32() {
		return nil, errors.New("checksum mismatch")
	}
	for i := range g.levels {
		for l := 0; l <= int(g.levels[i]); l++ {
			for _, n := range g.neighbors(uint32(i), l) {
				if uint64(n) >= nodes || int(g.levels[n]) < l {
					return nil, fmt.Errorf("node %d links to node %d at level %d, which has no such node", i, n, l)
				}
			}
		}
	}
	p.st = st
	return p, nil
}

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
