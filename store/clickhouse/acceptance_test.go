package clickhouse_test

import (
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/memory/storetest"
	"github.com/hindsight-memory/hindsight/store/clickhouse"
)

func TestEpisodicStoreChDB(t *testing.T) {
	storetest.TestEpisodicStore(t, func(t *testing.T) memory.EpisodicStore { return openChDB(t, "") })
}

func TestEpisodicStoreServerNative(t *testing.T) {
	serverAddr(t)
	storetest.TestEpisodicStore(t, func(t *testing.T) memory.EpisodicStore { return openServer(t, clickhouse.Native) })
}

func TestEpisodicStoreServerHTTP(t *testing.T) {
	serverAddr(t)
	storetest.TestEpisodicStore(t, func(t *testing.T) memory.EpisodicStore { return openServer(t, clickhouse.HTTP) })
}
