// Package consolidate is the pure logic of Hindsight's weekly
// consolidation, the seeds' "每周跑一次归档任务，把超过 30 天的 Episodic
// Memory 做一次聚类，相似的任务合并成一条'典型情景'，原始记录移到冷存储":
//
//  1. Cluster groups a tenant's old episodes (older than DefaultMinAge,
//     queried by the caller) by task type and embedding similarity:
//     agglomerative clustering with average linkage (LinkageAverage) on
//     cosine similarity, stopped at a threshold (ThresholdFor the
//     embedder), computed with the nearest-neighbour-chain algorithm in
//     O(n²). Clusters have at least MinSize members; larger than MaxSize
//     they are split in time order.
//  2. A Summarizer writes each cluster's typical episode (a
//     memory.Episode with Status memory.EpisodeSummary, ID SummaryID of
//     the members, SourceEpisodes listing them): Offline counts common
//     steps, failures, outcomes and the date range; LLMSummarizer asks a
//     model for the same record under a strict JSON schema and checks its
//     answer against the counts.
//  3. Promotions finds lessons seen in at least PromoteConfig.MinEpisodes
//     episodes of a cluster (a recurring failure and its common fix, or a
//     step every success shares and that demonstrably matters) as lesson
//     candidates with all their source episodes, for the merge pipeline:
//     a lesson already known gains sources and confidence instead of
//     being added twice.
//  4. ReconcileMemories and ReconcileEpisodes compare the vector index
//     with the system of record and say which documents to re-index and
//     which to delete.
//
// The caller (the Consolidate workflow's activities) does all I/O: it
// reads the episodes and their vectors, stores the typical episodes,
// moves the members to cold storage (memory.EpisodeStore.ArchiveEpisodes),
// merges the promotions and applies the reconciliation. Everything here is
// deterministic: the same input, in any order, gives the same output, so
// a retried activity repeats the same decisions, and IDs derived from
// content make repeated writes idempotent.
package consolidate

import "time"

// DefaultMinAge is how old an episode must be (by EndedAt) before it is
// consolidated: the seeds' 30 days. Recent episodes stay as they are,
// where recall finds them with all their detail.
const DefaultMinAge = 30 * 24 * time.Hour
