package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hindsight-memory/hindsight/llm/offline"
	"github.com/hindsight-memory/hindsight/llm/openai"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/service"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
	"github.com/hindsight-memory/hindsight/store/clickhouse/chdb"
	"github.com/hindsight-memory/hindsight/store/milvus"
	"github.com/hindsight-memory/hindsight/store/milvus/milvusfake"
)

// Service returns the application service every front end calls, over the
// runtime's store and recall engine and the Temporal client tc. Unless cfg
// names one, it redacts with the runtime's redactor, keyed with the
// deployment's redaction key as extraction's is.
func (rt *Runtime) Service(cfg service.Config, tc client.Client) *service.Service {
	if cfg.Redactor == nil {
		cfg.Redactor = rt.redactor
	}
	return service.New(cfg, rt.Store, tc, rt.Engine, rt.Logger)
}

// OpenEpisodicLog opens the episodic log alone, for an operator command:
// the server cfg.ClickHouse names, else the embedded engine cfg.ChDB. With
// migrate false it applies no migration, and an embedded engine whose data
// directory does not exist yet is an error. The function returned closes
// it.
func OpenEpisodicLog(ctx context.Context, cfg Config, migrate bool) (*clickhouse.Store, func() error, error) {
	if cfg.ClickHouse != nil {
		c := *cfg.ClickHouse
		c.SkipMigrate = !migrate
		st, err := clickhouse.Open(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	if cfg.ChDB == nil {
		return nil, nil, fmt.Errorf("app: no episodic log configured (ClickHouse or ChDB)")
	}
	c := *cfg.ChDB
	c.Store.SkipMigrate = !migrate
	if _, err := os.Stat(c.DataDir); err != nil && !migrate {
		return nil, nil, fmt.Errorf("no embedded episodic log in %s: run `hindsight dev` first, or set CLICKHOUSE_ADDR", c.DataDir)
	}
	st, err := chdb.Open(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return st.Store, st.Close, nil
}

// OpenDevEpisodicLog reaches the episodic log of a running `hindsight dev`,
// which owns its data directory, through the loopback ClickHouse HTTP
// interface at addr with the token it wrote: read-only, no migrations, a
// second to answer.
func OpenDevEpisodicLog(ctx context.Context, addr, database, token string) (*clickhouse.Store, error) {
	return clickhouse.Open(ctx, clickhouse.Config{
		Addr: []string{addr}, Protocol: clickhouse.HTTP, Database: database,
		Username: "hindsight", Password: token,
		SkipMigrate: true, DialTimeout: time.Second,
	})
}

// Models returns the embedder and chat model cfg configures, without the
// rest of a runtime: the OpenAI-compatible endpoint's (its embedder only
// when it names an embedding model), else the offline embedder and no
// chat model.
func Models(cfg Config) (memory.Embedder, memory.LLM, error) {
	dim := cfg.EmbedDim
	if dim == 0 {
		dim = DefaultEmbedDim
	}
	if cfg.OpenAI == nil {
		return offline.NewEmbedder(dim), nil, nil
	}
	c, err := openai.New(*cfg.OpenAI)
	if err != nil {
		return nil, nil, err
	}
	if cfg.OpenAI.EmbeddingModel == "" {
		return offline.NewEmbedder(dim), c, nil
	}
	return c, c, nil
}

// EvalIndexes opens, for an evaluation, a fresh set of Milvus collections
// at each call of newIndex, on the server mc.Address names or, when it is
// empty, on an in-process fake of Milvus (labelled a fake:
// store/milvus/milvusfake; fake says so). Each index drops its
// collections when closed; closeAll stops the fake.
func EvalIndexes(mc milvus.Config) (newIndex func(ctx context.Context, dim int) (memory.VectorIndex, error), closeAll func(), fake bool, err error) {
	closeAll = func() {}
	if mc.Address == "" {
		f, err := milvusfake.Start()
		if err != nil {
			return nil, nil, false, err
		}
		mc.Address, closeAll, fake = f.Addr(), f.Close, true
	}
	run := time.Now().UnixNano() % 1e9
	var seq atomic.Int64
	newIndex = func(ctx context.Context, dim int) (memory.VectorIndex, error) {
		c := mc
		c.Dim, c.CollectionPrefix = dim, fmt.Sprintf("hindsight_eval_%d_%d", run, seq.Add(1))
		x, err := milvus.Open(ctx, c)
		if err != nil {
			return nil, err
		}
		return droppedOnClose{x}, nil
	}
	return newIndex, closeAll, fake, nil
}

// droppedOnClose is a Milvus index whose collections go when it closes.
type droppedOnClose struct{ *milvus.Index }

func (x droppedOnClose) Close() error {
	err := x.Drop(context.Background())
	return errors.Join(err, x.Index.Close())
}
