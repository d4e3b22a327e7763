// Package callargs reads the settings of a tool call out of its text: the
// keyword arguments and assignments of code (encoding='gbk',
// if_exists="append", PGTZ=UTC) and the flags of a command line (-n
// staging, --timeout 10m, --dry-run=client, --force).
//
// Settings are what tells two otherwise similar calls apart
// (encoding='gbk' from encoding='utf-8'), so the offline extractor
// (llm/offline) reads them to say what a fix changed, and consolidation
// (consolidate) reads them to decide whether steps of different episodes
// are the same action. Both must read them the same way, which is why the
// rules live here once.
//
// The rules are heuristics for text written by agents, not a parser of any
// language: they err on the side of reporting fewer settings, since a
// setting that is not one (a URL's ?date=…, a call's result) would become
// advice.
package callargs
