package milvus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/milvus-io/milvus-sdk-go/v2/client"
	"github.com/milvus-io/milvus-sdk-go/v2/entity"

	"github.com/hindsight-memory/hindsight/memory"
	schema "github.com/hindsight-memory/hindsight/schema/milvus"
)

// Index is a memory.VectorIndex on Milvus. It is safe for concurrent use.
type Index struct {
	cfg         Config
	client      client.Client
	specs       map[memory.Collection]schema.Collection
	consistency entity.ConsistencyLevel
}

var _ memory.VectorIndex = (*Index)(nil)

// Open connects to Milvus and ensures both collections exist with the
// expected fields, are indexed and are loaded. It is idempotent: opening
// again, from any number of processes, changes nothing. It fails with
// EINVALID when a collection stores vectors of another dimension than
// cfg.Dim.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &memory.Error{Code: memory.EINVALID, Op: "milvus: open", Err: err}
	}
	cfg = cfg.withDefaults()
	dialCtx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	c, err := client.NewClient(dialCtx, client.Config{
		Address:       cfg.Address,
		Username:      cfg.Username,
		Password:      cfg.Password,
		APIKey:        cfg.Token,
		DBName:        cfg.Database,
		EnableTLSAuth: cfg.TLS,
	})
	if err != nil {
		return nil, fmt.Errorf("milvus: connect to %s: %w", cfg.Address, err)
	}
	x := &Index{cfg: cfg, client: c, specs: map[memory.Collection]schema.Collection{}}
	switch cfg.Consistency {
	case "Bounded":
		x.consistency = entity.ClBounded
	case "Session":
		x.consistency = entity.ClSession
	case "Eventually":
		x.consistency = entity.ClEventually
	default:
		x.consistency = entity.ClStrong
	}
	opts := cfg.schemaOptions()
	for _, coll := range []memory.Collection{memory.CollectionMemories, memory.CollectionEpisodes} {
		spec := schema.Spec(coll, opts)
		x.specs[coll] = spec
		if err := x.ensure(ctx, spec); err != nil {
			c.Close()
			return nil, err
		}
	}
	return x, nil
}

// ensure makes one collection ready: created, checked against the spec,
// indexed and loaded.
func (x *Index) ensure(ctx context.Context, spec schema.Collection) error {
	log := x.cfg.Logger.With("collection", spec.Name)
	rctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
	defer cancel()
	has, err := x.client.HasCollection(rctx, spec.Name)
	if err != nil {
		return x.fail("open", spec.Name, err)
	}
	if !has {
		opts := []client.CreateCollectionOption{client.WithConsistencyLevel(x.consistency)}
		if x.cfg.Partitions > 0 {
			opts = append(opts, client.WithPartitionNum(int64(x.cfg.Partitions)))
		}
		// Another process may create the collection at the same moment; if
		// creating fails and the collection exists, the check below decides.
		if err := x.client.CreateCollection(rctx, entitySchema(spec), int32(x.cfg.Shards), opts...); err != nil {
			if has, herr := x.client.HasCollection(rctx, spec.Name); herr != nil || !has {
				return x.fail("create collection", spec.Name, err)
			}
		} else {
			log.Info("milvus: created collection", "dim", x.cfg.Dim)
		}
	}
	coll, err := x.client.DescribeCollection(rctx, spec.Name)
	if err != nil {
		return x.fail("describe collection", spec.Name, err)
	}
	if err := spec.Check(specFields(coll.Schema)); err != nil {
		var de *schema.DimensionError
		var se *schema.SparseFieldError
		if errors.As(err, &de) || errors.As(err, &se) {
			return &memory.Error{Code: memory.EINVALID, Op: "milvus: open", Err: err}
		}
		return fmt.Errorf("milvus: open: %w", err)
	}
	if coll.Schema.EnableDynamicField {
		return fmt.Errorf("milvus: open: collection %s has dynamic fields enabled, which the spec forbids; drop it and reindex, or use another collection prefix", spec.Name)
	}

	for _, want := range spec.Indexes() {
		if err := x.ensureIndex(ctx, rctx, spec.Name, want); err != nil {
			return err
		}
	}
	return x.ensureLoaded(ctx, spec.Name)
}

// ensureIndex creates the index of one vector field unless it exists, and
// checks an existing one's metric.
func (x *Index) ensureIndex(ctx, rctx context.Context, name string, want schema.Index) error {
	indexes, err := x.client.DescribeIndex(rctx, name, want.Field)
	switch {
	case err != nil && strings.Contains(err.Error(), "index not found"):
		params, _ := json.Marshal(want.Params)
		idx := entity.NewGenericIndex("", entity.IndexType(want.Type), map[string]string{
			"metric_type": want.Metric, "params": string(params),
		})
		// Building the index of a collection that already holds data takes
		// as long as loading it; wait as long.
		ictx, icancel := context.WithTimeout(ctx, x.cfg.LoadTimeout)
		err := x.client.CreateIndex(ictx, name, want.Field, idx, false)
		icancel()
		if err != nil {
			return x.fail("create index", name, err)
		}
		x.cfg.Logger.Info("milvus: created index", "collection", name, "field", want.Field, "type", want.Type, "metric", want.Metric)
	case err != nil:
		return x.fail("describe index", name, err)
	default:
		for _, idx := range indexes {
			if m := idx.Params()["metric_type"]; m != want.Metric {
				if want.Field != schema.FieldVector {
					return fmt.Errorf("milvus: open: collection %s has a %s index on %s with metric %s, want %s: drop the index so that it is rebuilt",
						name, idx.IndexType(), want.Field, m, want.Metric)
				}
				return fmt.Errorf("milvus: open: collection %s has a %s index with metric %s but the config asks for %s: set Metric to %s, or drop the index so that it is rebuilt",
					name, idx.IndexType(), m, want.Metric, m)
			}
		}
	}
	return nil
}

// ensureLoaded loads a collection unless it is loaded, and waits until it
// is, up to LoadTimeout.
func (x *Index) ensureLoaded(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.LoadTimeout)
	defer cancel()
	state, err := x.client.GetLoadState(ctx, name, nil)
	if err != nil {
		return x.fail("load state", name, err)
	}
	if state == entity.LoadStateLoaded {
		return nil
	}
	if err := x.client.LoadCollection(ctx, name, true); err != nil {
		return x.fail("load collection", name, err)
	}
	// Loading a large collection takes a while; poll with a growing interval.
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		state, err := x.client.GetLoadState(ctx, name, nil)
		if err != nil {
			return x.fail("load state", name, err)
		}
		if state == entity.LoadStateLoaded {
			x.cfg.Logger.Info("milvus: loaded collection", "collection", name)
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("milvus: collection %s did not load within %s (load timeout): %w", name, x.cfg.LoadTimeout, ctx.Err())
		case <-t.C:
		}
	}
}

// Drop drops both collections. It is for tests and for retiring a
// collection prefix after a reindex; the Index is unusable afterwards.
func (x *Index) Drop(ctx context.Context) error {
	for _, spec := range x.specs {
		ctx, cancel := context.WithTimeout(ctx, x.cfg.RequestTimeout)
		err := x.client.DropCollection(ctx, spec.Name)
		cancel()
		if err != nil {
			return x.fail("drop collection", spec.Name, err)
		}
	}
	return nil
}

// Close implements memory.VectorIndex.
func (x *Index) Close() error {
	if err := x.client.Close(); err != nil {
		return fmt.Errorf("milvus: close: %w", err)
	}
	return nil
}

// fail turns an error from Milvus into one that says what happened and what
// to do. Milvus reports its errors as text (the SDK keeps only the reason),
// so they are recognised by Milvus' stable wording.
func (x *Index) fail(op, coll string, err error) error {
	msg := err.Error()
	wrap := func(code, format string, args ...any) error {
		return &memory.Error{Code: code, Op: "milvus: " + op + " " + coll, Message: fmt.Sprintf(format, args...), Err: err}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
	case strings.Contains(msg, "collection not loaded"):
		return wrap(memory.EINTERNAL, "the collection is not loaded in Milvus (released by an operator, or evicted); restart hindsight, which loads it, or load it with the Milvus CLI")
	case strings.Contains(msg, "dimension mismatch") || strings.Contains(msg, "not equal to schema dim"):
		return wrap(memory.EINVALID, "the collection holds vectors of another dimension than this index's %d: it was rebuilt for another embedder; reindex, or configure the embedder it was built with", x.cfg.Dim)
	case strings.Contains(msg, "cannot parse expression"):
		return wrap(memory.EINTERNAL, "Milvus rejected a filter expression built by the adapter; this is a bug in store/milvus, please report it with the error")
	case strings.Contains(msg, "collection not found"):
		return wrap(memory.EINTERNAL, "the collection does not exist (dropped after hindsight started?); restart hindsight to recreate it, then reindex")
	}
	return fmt.Errorf("milvus: %s %s: %w", op, coll, err)
}

// entitySchema translates a spec into the SDK's schema.
func entitySchema(spec schema.Collection) *entity.Schema {
	s := entity.NewSchema().WithName(spec.Name).WithDescription(spec.Description).WithDynamicFieldEnabled(false)
	for _, f := range spec.Fields {
		ef := entity.NewField().WithName(f.Name).WithDescription(f.Description).WithDataType(fieldTypes[f.Type]).
			WithIsPrimaryKey(f.PrimaryKey).WithIsPartitionKey(f.PartitionKey)
		switch f.Type {
		case schema.VarChar:
			ef.WithMaxLength(int64(f.MaxLength))
		case schema.FloatVector:
			ef.WithDim(int64(f.Dim))
		case schema.SparseFloatVector: // no dimension
		case schema.Array:
			ef.WithElementType(fieldTypes[f.ElementType]).WithMaxCapacity(int64(f.MaxCapacity))
			if f.ElementType == schema.VarChar {
				ef.WithMaxLength(int64(f.MaxLength))
			}
		}
		s.WithField(ef)
	}
	return s
}

var fieldTypes = map[schema.DataType]entity.FieldType{
	schema.VarChar:     entity.FieldTypeVarChar,
	schema.Int64:       entity.FieldTypeInt64,
	schema.Double:      entity.FieldTypeDouble,
	schema.Bool:        entity.FieldTypeBool,
	schema.FloatVector: entity.FieldTypeFloatVector,
	schema.Array:       entity.FieldTypeArray,

	schema.SparseFloatVector: entity.FieldTypeSparseVector,
}

// specFields translates the fields a server reports back into the spec's
// terms, for schema.Collection.Check.
func specFields(s *entity.Schema) []schema.Field {
	typeOf := func(t entity.FieldType) schema.DataType {
		for st, et := range fieldTypes {
			if et == t {
				return st
			}
		}
		return schema.DataType(t.Name())
	}
	var out []schema.Field
	for _, f := range s.Fields {
		var n [3]int
		for i, key := range []string{entity.TypeParamMaxLength, entity.TypeParamMaxCapacity, entity.TypeParamDim} {
			fmt.Sscan(f.TypeParams[key], &n[i])
		}
		sf := schema.Field{
			Name: f.Name, Type: typeOf(f.DataType), MaxLength: n[0], MaxCapacity: n[1], Dim: n[2],
			PrimaryKey: f.PrimaryKey, PartitionKey: f.IsPartitionKey,
		}
		if f.DataType == entity.FieldTypeArray {
			sf.ElementType = typeOf(f.ElementType)
		}
		out = append(out, sf)
	}
	return out
}
