// Package chdb runs Hindsight's episodic store on chDB, ClickHouse as an
// in-process library, for `hindsight dev` and the tests: the same
// store/clickhouse adapter and the same SQL as production, without a server.
//
// libchdb.so comes from the npm package @chdb/lib-linux-x64-gnu at Version;
// scripts/fetch-chdb.sh (`make chdb`) puts it in the cache directory. It is
// loaded with purego (no cgo) only when Open is first called, so a binary
// without the library runs everything else and Open says how to get it.
//
// The adapter reaches the engine through clickhouse-go's HTTP protocol: an
// http.RoundTripper (transport.go) answers ClickHouse HTTP requests by
// calling chDB's C API — typed parameters are bound by the engine, and
// inserts use chDB's streaming insert (inline INSERT data would stop at the
// first blank line). chDB allows one data directory per process and one
// process per data directory; a lock file turns a second owner into a clear
// error instead of corruption.
package chdb
