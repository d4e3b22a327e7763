package chdb

// Version is the chDB release this build is tested with: the version of the
// npm package @chdb/lib-linux-x64-gnu that scripts/fetch-chdb.sh installs.
const Version = "26.7.3-stable.1"

// FetchHint tells a person how to get the library.
const FetchHint = "run `make chdb` (or scripts/fetch-chdb.sh) to download @chdb/lib-linux-x64-gnu@" + Version +
	" into ${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}/chdb/" + Version + "/, or set HINDSIGHT_CHDB_LIB to an existing libchdb.so"
