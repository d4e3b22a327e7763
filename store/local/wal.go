package local

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hindsight-memory/hindsight/memory"
)

// The write-ahead log is a sequence of segment files, wal/<seq>.log. Each
// record is framed as
//
//	length uint32 | CRC-32C of the payload uint32 | payload
//
// and its payload is
//
//	lsn uint64 | op | collection | tenant | count | items
//
// where an upsert's items are documents with their vectors and a delete's
// are IDs (a document's sparse vector, when it has one, is part of the
// document's encoding, behind a flag bit that records logged before sparse
// vectors existed leave clear). Every record touches one partition. A write is acknowledged only
// after its records are written and, under SyncAlways, fsynced; concurrent
// writers share one fsync (group commit).
//
// A crash can leave a torn record at the end of the last segment: recovery
// keeps every whole record before it and truncates the rest, which was never
// acknowledged. A bad record anywhere else is corruption and stops Open.

const (
	opUpsert byte = 1
	opDelete byte = 2

	frameHeader = 8
	maxRecord   = 1 << 30
)

// record is one logged change to one partition.
type record struct {
	lsn    uint64
	op     byte
	coll   memory.Collection
	tenant string
	docs   []memory.VectorDoc // opUpsert
	ids    []string           // opDelete
}

func appendRecord(b []byte, r record) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = binary.LittleEndian.AppendUint64(b, r.lsn)
	b = append(b, r.op)
	b = appendString(b, string(r.coll))
	b = appendString(b, r.tenant)
	switch r.op {
	case opUpsert:
		b = appendUvarint(b, uint64(len(r.docs)))
		for _, d := range r.docs {
			b = appendDoc(b, d)
			b = appendVector(b, d.Vector)
		}
	case opDelete:
		b = appendUvarint(b, uint64(len(r.ids)))
		for _, id := range r.ids {
			b = appendString(b, id)
		}
	}
	payload := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

func decodeRecord(payload []byte, dim int) (record, error) {
	d := &decoder{r: bytes.NewReader(payload)}
	r := record{lsn: d.uint64(), op: d.byte(), coll: memory.Collection(d.string()), tenant: d.string()}
	n := d.length()
	switch r.op {
	case opUpsert:
		for range n {
			doc := d.doc(r.tenant)
			doc.Vector = d.vector(nil, dim)
			r.docs = append(r.docs, doc)
		}
	case opDelete:
		for range n {
			r.ids = append(r.ids, d.string())
		}
	default:
		if d.err == nil {
			return r, fmt.Errorf("unknown operation %d", r.op)
		}
	}
	return r, d.err
}

// wal appends records to the current segment.
type wal struct {
	dir  string
	sync bool

	mu    sync.Mutex // guards the fields below
	f     *os.File
	seg   uint64
	size  int64  // of the current segment
	lsn   uint64 // last assigned
	since int64  // bytes appended since the last rotation
	err   error  // a failed write or fsync: the log accepts nothing more

	syncMu    sync.Mutex // one fsync at a time; also excludes rotation
	syncedSeg uint64
	syncedOff int64
}

func segmentPath(dir string, seq uint64) string {
	return filepath.Join(dir, "wal", fmt.Sprintf("%016d.log", seq))
}

// segments lists the segment numbers in dir, in order.
func segments(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "wal"))
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		if seq, err := strconv.ParseUint(name, 10, 64); err == nil {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// replayWAL reads every record of every segment in order and hands it to
// apply, truncating a torn tail off the last segment. It returns the log
// ready for appending after the last record, with LSNs continuing after
// minLSN or the last LSN seen, whichever is larger.
func replayWAL(dir string, dim int, sync bool, minLSN uint64, log *slog.Logger, apply func(record)) (*wal, error) {
	seqs, err := segments(dir)
	if err != nil {
		return nil, err
	}
	w := &wal{dir: dir, sync: sync, lsn: minLSN}
	for i, seq := range seqs {
		last := i == len(seqs)-1
		good, err := replaySegment(segmentPath(dir, seq), dim, func(r record) {
			w.lsn = max(w.lsn, r.lsn)
			apply(r)
		})
		if err != nil && !last {
			return nil, fmt.Errorf("log segment %s is corrupt at byte %d (%v); restore the directory from a backup or rebuild the index from the system of record", segmentPath(dir, seq), good, err)
		}
		if err != nil {
			// A torn tail: the write that produced it was never acknowledged.
			log.Warn("local: dropping a torn record at the end of the log", "segment", segmentPath(dir, seq), "offset", good, "reason", err)
			if err := os.Truncate(segmentPath(dir, seq), good); err != nil {
				return nil, err
			}
		}
		if last {
			f, err := os.OpenFile(segmentPath(dir, seq), os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return nil, err
			}
			if err := f.Sync(); err != nil { // make the truncation durable
				f.Close()
				return nil, err
			}
			w.f, w.seg, w.size = f, seq, good
		}
	}
	if w.f == nil {
		if err := w.create(1); err != nil {
			return nil, err
		}
	}
	w.syncedSeg, w.syncedOff = w.seg, w.size
	return w, nil
}

// replaySegment applies the whole records of one segment and returns the
// offset after the last one, with an error if something other than the end
// of the file followed it.
func replaySegment(path string, dim int, apply func(record)) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	var header [frameHeader]byte
	var payload []byte
	for {
		if _, err := io.ReadFull(r, header[:]); err != nil {
			if err == io.EOF {
				return off, nil
			}
			return off, fmt.Errorf("short record header: %w", err)
		}
		n := binary.LittleEndian.Uint32(header[:])
		if n == 0 || n > maxRecord {
			return off, fmt.Errorf("record length %d is out of range", n)
		}
		if cap(payload) < int(n) {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return off, fmt.Errorf("short record: %w", err)
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(header[4:]) {
			return off, errors.New("checksum mismatch")
		}
		rec, err := decodeRecord(payload, dim)
		if err != nil {
			return off, fmt.Errorf("record passes its checksum but does not decode: %w", err)
		}
		apply(rec)
		off += frameHeader + int64(n)
	}
}

// create starts segment seq. w.mu must be held (or w not yet shared).
func (w *wal) create(seq uint64) error {
	f, err := os.OpenFile(segmentPath(w.dir, seq), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if err := syncDir(filepath.Join(w.dir, "wal")); err != nil {
		f.Close()
		return err
	}
	w.f, w.seg, w.size = f, seq, 0
	return nil
}

// append logs records, numbering them with consecutive LSNs, and returns
// the first. When it returns nil the records are durable (as durable as
// the sync policy makes them).
func (w *wal) append(recs []record) (uint64, error) {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return 0, w.err
	}
	first := w.lsn + 1
	var buf []byte
	for i := range recs {
		recs[i].lsn = first + uint64(i)
		buf = appendRecord(buf, recs[i])
	}
	if _, err := w.f.Write(buf); err != nil {
		// The segment may now end in part of a record; appending after it
		// would hide later records from recovery.
		w.err = fmt.Errorf("local: write-ahead log failed, reopen the index: %w", err)
		w.mu.Unlock()
		return 0, w.err
	}
	w.lsn += uint64(len(recs))
	w.size += int64(len(buf))
	w.since += int64(len(buf))
	seg, off := w.seg, w.size
	w.mu.Unlock()
	if !w.sync {
		return first, nil
	}
	return first, w.syncTo(seg, off)
}

// syncTo makes the log durable up to offset off of segment seg. Writers
// that arrive while an fsync runs are covered by the next one, together.
func (w *wal) syncTo(seg uint64, off int64) error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.syncedSeg > seg || w.syncedSeg == seg && w.syncedOff >= off {
		return nil
	}
	w.mu.Lock()
	f, s, o, err := w.f, w.seg, w.size, w.err
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		w.mu.Lock()
		w.err = fmt.Errorf("local: fsync of the write-ahead log failed, reopen the index: %w", err)
		w.mu.Unlock()
		return w.err
	}
	w.syncedSeg, w.syncedOff = s, o
	return nil
}

// bytesSinceRotate is how much was logged since the last checkpoint began.
func (w *wal) bytesSinceRotate() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.since
}

// rotate closes the current segment and starts the next one, which it
// returns: every record logged before rotate returned is in an older one.
func (w *wal) rotate() (uint64, error) {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if w.sync {
		if err := w.f.Sync(); err != nil {
			w.err = err
			return 0, err
		}
	}
	if err := w.f.Close(); err != nil {
		w.err = err
		return 0, err
	}
	if err := w.create(w.seg + 1); err != nil {
		w.err = err
		return 0, err
	}
	w.since = 0
	w.syncedSeg, w.syncedOff = w.seg, 0
	return w.seg, nil
}

// removeBefore deletes the segments older than seq, which snapshots cover.
func (w *wal) removeBefore(seq uint64) error {
	seqs, err := segments(w.dir)
	if err != nil {
		return err
	}
	for _, s := range seqs {
		if s < seq {
			if err := os.Remove(segmentPath(w.dir, s)); err != nil {
				return err
			}
		}
	}
	return syncDir(filepath.Join(w.dir, "wal"))
}

func (w *wal) close() error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	var err error
	if w.sync && w.err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if w.err == nil {
		w.err = errors.New("local: the index is closed")
	}
	return err
}
