package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/hindsight-memory/hindsight/memory"
)

// The binary encoding shared by log records and snapshots: little-endian
// fixed-width numbers, uvarint lengths, and documents as their fields in a
// fixed order. Times keep seconds and nanoseconds, so any time.Time round
// trips (in UTC), including the zero time.

// maxString bounds a decoded string or list length, so that a corrupt
// length cannot make a decoder allocate gigabytes.
const maxString = 1 << 24

// Bits of a document's flags byte. A bit that is clear means its field is
// absent, which is how records and snapshots written before the field
// existed read: the flags byte makes every optional field a trailing one.
const (
	flagPinned = 1 << iota
	flagScope
	flagSparse
)

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendFloat64(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func appendVector(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// appendDoc encodes every field of d but the tenant (the partition has it)
// and the vector (stored next to it).
func appendDoc(b []byte, d memory.VectorDoc) []byte {
	b = appendString(b, d.ID)
	b = appendString(b, string(d.Kind))
	b = appendString(b, d.TaskType)
	b = appendString(b, d.Status)
	b = appendFloat64(b, d.Confidence)
	b = appendFloat64(b, d.Decay)
	b = appendTime(b, d.CreatedAt)
	b = appendTime(b, d.UpdatedAt)
	b = binary.AppendVarint(b, int64(d.RecallCount))
	// One flags byte: bit 0 pinned, bit 1 a scope follows, bit 2 a sparse
	// vector follows the entities. Documents written before scopes existed
	// have no scope, which reads as shared; documents written before
	// sparse vectors existed have none.
	flags := byte(0)
	if d.Pinned {
		flags |= flagPinned
	}
	if d.Scope != "" {
		flags |= flagScope
	}
	if !d.Sparse.IsZero() {
		flags |= flagSparse
	}
	b = append(b, flags)
	if d.Scope != "" {
		b = appendString(b, string(d.Scope))
	}
	b = appendUvarint(b, uint64(len(d.Entities)))
	for _, e := range d.Entities {
		b = appendString(b, e)
	}
	if !d.Sparse.IsZero() {
		b = appendSparse(b, d.Sparse)
	}
	return b
}

// appendSparse encodes a valid sparse vector: its length, then per entry
// the gap from the previous index (the first index itself) as a uvarint
// and the weight as a float32.
func appendSparse(b []byte, v memory.SparseVector) []byte {
	b = appendUvarint(b, uint64(len(v.Indices)))
	prev := uint32(0)
	for i, x := range v.Indices {
		b = appendUvarint(b, uint64(x-prev))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v.Values[i]))
		prev = x
	}
	return b
}

// decoder reads the encoding; the first error sticks and later reads
// return zero values, so callers check err once.
type decoder struct {
	r interface {
		io.Reader
		io.ByteReader
	}
	err error
	buf []byte
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = err
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	d.buf = d.buf[:n]
	if _, err := io.ReadFull(d.r, d.buf); err != nil {
		d.fail(err)
		return nil
	}
	return d.buf
}

func (d *decoder) byte() byte {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) uint32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) uint64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) length() int {
	n := d.uvarint()
	if n > maxString {
		d.fail(fmt.Errorf("length %d is out of range", n))
		return 0
	}
	return int(n)
}

func (d *decoder) string() string { return string(d.bytes(d.length())) }

func (d *decoder) float64() float64 { return math.Float64frombits(d.uint64()) }

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail(fmt.Errorf("nanoseconds %d are out of range", nsec))
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// vector reads dim float32s into v (reused when long enough).
func (d *decoder) vector(v []float32, dim int) []float32 {
	b := d.bytes(4 * dim)
	if b == nil {
		return nil
	}
	if cap(v) < dim {
		v = make([]float32, dim)
	}
	v = v[:dim]
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func (d *decoder) doc(tenant string) memory.VectorDoc {
	doc := memory.VectorDoc{
		ID:          d.string(),
		Tenant:      tenant,
		Kind:        memory.Kind(d.string()),
		TaskType:    d.string(),
		Status:      d.string(),
		Confidence:  d.float64(),
		Decay:       d.float64(),
		CreatedAt:   d.time(),
		UpdatedAt:   d.time(),
		RecallCount: int(d.varint()),
	}
	flags := d.byte()
	doc.Pinned = flags&flagPinned != 0
	if flags&flagScope != 0 {
		doc.Scope = memory.Scope(d.string())
	}
	if n := d.length(); n > 0 {
		doc.Entities = make([]string, n)
		for i := range doc.Entities {
			doc.Entities[i] = d.string()
		}
	}
	if flags&flagSparse != 0 {
		doc.Sparse = d.sparse()
	}
	return doc
}

// sparse reads a vector written by appendSparse, checking that its indices
// increase and stay in range.
func (d *decoder) sparse() memory.SparseVector {
	n := d.length()
	if n == 0 {
		d.fail(errors.New("an empty sparse vector is flagged as present"))
		return memory.SparseVector{}
	}
	v := memory.SparseVector{Indices: make([]uint32, 0, min(n, 1<<16)), Values: make([]float32, 0, min(n, 1<<16))}
	idx := uint64(0)
	for i := 0; i < n && d.err == nil; i++ {
		gap := d.uvarint()
		if i > 0 && gap == 0 {
			d.fail(fmt.Errorf("sparse index %d repeats", idx))
		}
		if idx += gap; gap > memory.MaxSparseIndex || idx > memory.MaxSparseIndex {
			d.fail(fmt.Errorf("sparse index %d is out of range", idx))
		}
		v.Indices = append(v.Indices, uint32(idx))
		v.Values = append(v.Values, math.Float32frombits(d.uint32()))
	}
	if d.err != nil {
		return memory.SparseVector{}
	}
	return v
}
