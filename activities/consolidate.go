package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/hindsight-memory/hindsight/consolidate"
	"github.com/hindsight-memory/hindsight/memory"
)

// PlanConsolidationInput asks which episodes of a tenant to consolidate.
type PlanConsolidationInput struct {
	Tenant string `json:"tenant"`
	// Before: live episodes that ended before it are old enough.
	Before    time.Time `json:"before"`
	BatchSize int       `json:"batch_size"`
}

// ConsolidationBatch is one activity's worth of episodes: one task type,
// in time order.
type ConsolidationBatch struct {
	Tenant     string   `json:"tenant"`
	TaskType   string   `json:"task_type"`
	EpisodeIDs []string `json:"episode_ids"`
	// Set by the workflow.
	Threshold float64   `json:"threshold,omitempty"`
	PromoteAt int       `json:"promote_at,omitempty"`
	Now       time.Time `json:"now"`
}

// ConsolidationResult is what one batch did.
type ConsolidationResult struct {
	Clusters   int                `json:"clusters"`
	Summaries  []string           `json:"summaries"`
	Archived   int                `json:"archived"`
	Promotions []memory.Candidate `json:"promotions,omitempty"`
}

// ReconcileReport counts what reconciling the vector index repaired.
type ReconcileReport struct {
	Reindexed int `json:"reindexed"`
	Removed   int `json:"removed"`

	deleted []string // memory IDs removed, for recall's cache
}

// PlanConsolidation lists the live episodes of a tenant that ended before
// in.Before, grouped by task type and cut into batches in time order.
func (a *Activities) PlanConsolidation(ctx context.Context, in PlanConsolidationInput) ([]ConsolidationBatch, error) {
	eps, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: in.Tenant, Until: in.Before, Statuses: []memory.EpisodeStatus{memory.EpisodeLive}})
	if err != nil {
		return nil, temporalError(err)
	}
	size := cmp.Or(in.BatchSize, 1000)
	size = min(size, consolidate.DefaultMaxItems)
	byType := map[string][]memory.Episode{}
	for _, ep := range eps {
		byType[ep.TaskType] = append(byType[ep.TaskType], ep)
	}
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	slices.Sort(types)
	var out []ConsolidationBatch
	for _, t := range types {
		group := byType[t]
		if len(group) < 2 {
			continue // nothing to cluster with
		}
		slices.SortFunc(group, func(x, y memory.Episode) int {
			return cmp.Or(x.EndedAt.Compare(y.EndedAt), cmp.Compare(x.ID, y.ID))
		})
		for start := 0; start < len(group); start += size {
			b := ConsolidationBatch{Tenant: in.Tenant, TaskType: t}
			for _, ep := range group[start:min(start+size, len(group))] {
				b.EpisodeIDs = append(b.EpisodeIDs, ep.ID)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// ConsolidateBatch clusters a batch's episodes and, cluster by cluster,
// writes the typical episode, indexes it and moves the members to cold
// storage. Progress is heartbeated after every cluster: a retry (the
// worker died) resumes after the last finished cluster, skips clusters
// the store shows finished (a killed worker's last heartbeat may not have
// gone out), and everything it redoes is idempotent (the typical episode's
// ID depends on its members, archiving twice is a no-op). Members already archived by an earlier
// attempt are read from the archive, so the clusters come out the same.
func (a *Activities) ConsolidateBatch(ctx context.Context, b ConsolidationBatch) (ConsolidationResult, error) {
	res := ConsolidationResult{Summaries: []string{}}
	eps, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: b.Tenant, IDs: b.EpisodeIDs,
		Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeCold}})
	if err != nil {
		return res, temporalError(err)
	}
	items, err := a.episodeItems(ctx, b.Tenant, eps)
	if err != nil {
		return res, temporalError(err)
	}
	threshold := b.Threshold
	if threshold == 0 {
		threshold = consolidate.ThresholdFor(a.Embedder.Model())
	}
	clusters, err := consolidate.Cluster(items, consolidate.ClusterConfig{Threshold: threshold})
	if err != nil {
		return res, temporalError(err)
	}
	res.Clusters = len(clusters)

	done := 0
	if activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &done); err != nil {
			done = 0
		}
	}
	for i, cl := range clusters {
		members := make([]memory.Episode, len(cl))
		for j, k := range cl {
			members[j] = items[k].Episode
		}
		ids := make([]string, len(members))
		for j, m := range members {
			ids[j] = m.ID
		}
		res.Summaries = append(res.Summaries, consolidate.SummaryID(b.Tenant, ids))
		ps, err := consolidate.Promotions(b.Tenant, members, consolidate.PromoteConfig{MinEpisodes: b.PromoteAt, Screener: a.Screener})
		if err != nil {
			return res, temporalError(err)
		}
		for _, p := range ps {
			c := p.Candidate
			c.Sources = p.Sources
			res.Promotions = append(res.Promotions, c)
		}
		if i < done {
			res.Archived += len(members)
			continue // finished before the retry
		}
		// Heartbeats are throttled, so a worker killed just after a
		// cluster may not have reported it: the store says whether it
		// finished (its typical episode stored, its members archived).
		if finished, err := a.clusterFinished(ctx, b.Tenant, res.Summaries[i], ids); err != nil {
			return res, temporalError(err)
		} else if finished {
			res.Archived += len(members)
			activity.RecordHeartbeat(ctx, i+1)
			continue
		}
		if err := a.consolidateCluster(ctx, b, members, items, cl); err != nil {
			return res, err
		}
		res.Archived += len(members)
		activity.RecordHeartbeat(ctx, i+1)
	}
	return res, nil
}

// clusterFinished reports whether a cluster was consolidated already: its
// typical episode is stored and every member is archived.
func (a *Activities) clusterFinished(ctx context.Context, tenant, summaryID string, members []string) (bool, error) {
	eps, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, IDs: append([]string{summaryID}, members...),
		Statuses: []memory.EpisodeStatus{memory.EpisodeLive, memory.EpisodeCold, memory.EpisodeSummary}})
	if err != nil {
		return false, err
	}
	cold := 0
	stored := false
	for _, ep := range eps {
		switch {
		case ep.ID == summaryID:
			stored = true
		case ep.Status == memory.EpisodeCold:
			cold++
		}
	}
	return stored && cold == len(members), nil
}

// consolidateCluster writes one cluster's typical episode and archives its
// members, keeping their vectors with the cold status.
func (a *Activities) consolidateCluster(ctx context.Context, b ConsolidationBatch, members []memory.Episode, items []consolidate.Item, cl []int) error {
	var sum consolidate.Summary
	var err error
	if a.Summarizer != nil {
		sum, err = a.Summarizer.Summarize(ctx, b.Tenant, members, b.Now)
	} else {
		sum, err = consolidate.Offline{}.Summarize(ctx, b.Tenant, members, b.Now)
	}
	if err != nil {
		return temporalError(fmt.Errorf("summarize cluster of %d %s episodes: %w", len(members), b.TaskType, err))
	}
	if err := a.Store.PutEpisode(ctx, sum.Episode); err != nil {
		return temporalError(err)
	}
	if err := a.IndexEpisode(ctx, sum.Episode); err != nil {
		return err
	}
	ids := make([]string, len(members))
	docs := make([]memory.VectorDoc, len(members))
	for j, k := range cl {
		ep := items[k].Episode
		ep.Status = memory.EpisodeCold
		ids[j] = ep.ID
		docs[j] = memory.EpisodeVectorDoc(ep, items[k].Vector)
	}
	if err := a.Store.ArchiveEpisodes(ctx, b.Tenant, ids); err != nil {
		return temporalError(err)
	}
	return temporalError(a.Index.Upsert(ctx, memory.CollectionEpisodes, docs))
}

// episodeItems pairs episodes with their vectors in the active index,
// embedding (and re-indexing) any it lacks.
func (a *Activities) episodeItems(ctx context.Context, tenant string, eps []memory.Episode) ([]consolidate.Item, error) {
	return episodeItems(ctx, a.Index, a.Embedder, tenant, eps)
}

// episodeItems pairs episodes with their vectors in index x, embedding
// with emb (and writing to x) any x lacks.
func episodeItems(ctx context.Context, x memory.VectorIndex, emb memory.Embedder, tenant string, eps []memory.Episode) ([]consolidate.Item, error) {
	ids := make([]string, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	docs, err := x.Get(ctx, memory.CollectionEpisodes, tenant, ids)
	if err != nil {
		return nil, err
	}
	vec := make(map[string][]float32, len(docs))
	for _, d := range docs {
		vec[d.ID] = d.Vector
	}
	items := make([]consolidate.Item, len(eps))
	var missing []int
	for i, ep := range eps {
		items[i] = consolidate.Item{Episode: ep, Vector: vec[ep.ID]}
		if len(items[i].Vector) != emb.Dim() {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		texts := make([]string, len(missing))
		for j, i := range missing {
			texts[j] = memory.EpisodeEmbedText(eps[i])
		}
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embed episodes: %w", err)
		}
		repair := make([]memory.VectorDoc, len(missing))
		for j, i := range missing {
			items[i].Vector = vs[j]
			repair[j] = memory.EpisodeVectorDoc(eps[i], vs[j])
		}
		if err := x.Upsert(ctx, memory.CollectionEpisodes, repair); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// ReconcileIndex makes the vector index agree with the store for a tenant
// (consolidate.ReconcileMemories, ReconcileEpisodes): missing or stale
// documents are embedded and written again from the store, documents the
// store does not back (purged, forgotten, archived) are deleted. The store
// is the system of record; the index is derived.
func (a *Activities) ReconcileIndex(ctx context.Context, tenant string) (ReconcileReport, error) {
	rep, err := a.reconcile(ctx, tenant, a.Index, a.Embedder)
	if err != nil {
		return rep, temporalError(err)
	}
	// Recall's cache drops what the index no longer holds.
	if len(rep.deleted) > 0 {
		if err := a.Indexer.Remove(ctx, tenant, rep.deleted); err != nil {
			return rep, temporalError(err)
		}
	}
	return rep, nil
}

// reconcile makes index x, filled by embedder emb, agree with the store
// for a tenant, and returns what it changed.
func (a *Activities) reconcile(ctx context.Context, tenant string, x memory.VectorIndex, emb memory.Embedder) (ReconcileReport, error) {
	var rep ReconcileReport
	ms, err := a.Store.Memories(ctx, memory.MemoryFilter{Tenant: tenant})
	if err != nil {
		return rep, err
	}
	docs, err := listDocs(ctx, x, memory.CollectionMemories, tenant)
	if err != nil {
		return rep, err
	}
	plan, err := consolidate.ReconcileMemories(tenant, ms, docs)
	if err != nil {
		return rep, err
	}
	byID := make(map[string]memory.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	for start := 0; start < len(plan.Upsert); start += 64 {
		var batch []memory.Memory
		var texts []string
		for _, id := range plan.Upsert[start:min(start+64, len(plan.Upsert))] {
			batch = append(batch, byID[id])
			texts = append(texts, memory.EmbedText(byID[id]))
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return rep, fmt.Errorf("embed memories: %w", err)
		}
		out := make([]memory.VectorDoc, len(batch))
		for i, m := range batch {
			out[i] = memory.VectorDocOf(m, vecs[i])
		}
		if err := a.Indexer.AddKeywords(ctx, tenant, batch, out); err != nil {
			return rep, err
		}
		if err := x.Upsert(ctx, memory.CollectionMemories, out); err != nil {
			return rep, err
		}
		activity.RecordHeartbeat(ctx, start)
	}
	if len(plan.Delete) > 0 {
		if err := x.Delete(ctx, memory.CollectionMemories, tenant, plan.Delete); err != nil {
			return rep, err
		}
	}
	rep.Reindexed, rep.Removed, rep.deleted = len(plan.Upsert), len(plan.Delete), plan.Delete

	eps, err := a.Store.Episodes(ctx, memory.EpisodeFilter{Tenant: tenant, Statuses: allEpisodes})
	if err != nil {
		return rep, err
	}
	edocs, err := listDocs(ctx, x, memory.CollectionEpisodes, tenant)
	if err != nil {
		return rep, err
	}
	eplan, err := consolidate.ReconcileEpisodes(tenant, eps, edocs)
	if err != nil {
		return rep, err
	}
	epByID := make(map[string]memory.Episode, len(eps))
	for _, ep := range eps {
		epByID[ep.ID] = ep
	}
	var upsert []memory.Episode
	for _, id := range eplan.Upsert {
		upsert = append(upsert, epByID[id])
	}
	// Vectors of episodes whose status alone changed are reused.
	items, err := episodeItems(ctx, x, emb, tenant, upsert)
	if err != nil {
		return rep, err
	}
	if len(items) > 0 {
		fixed := make([]memory.VectorDoc, len(items))
		for i, it := range items {
			fixed[i] = memory.EpisodeVectorDoc(it.Episode, it.Vector)
		}
		if err := x.Upsert(ctx, memory.CollectionEpisodes, fixed); err != nil {
			return rep, err
		}
	}
	if len(eplan.Delete) > 0 {
		if err := x.Delete(ctx, memory.CollectionEpisodes, tenant, eplan.Delete); err != nil {
			return rep, err
		}
	}
	rep.Reindexed += len(eplan.Upsert)
	rep.Removed += len(eplan.Delete)
	return rep, nil
}

// listDocs pages through every document of a tenant in a collection.
func listDocs(ctx context.Context, x memory.VectorIndex, c memory.Collection, tenant string) ([]memory.VectorDoc, error) {
	var out []memory.VectorDoc
	after := ""
	for {
		page, err := x.List(ctx, c, memory.VectorFilter{Tenant: tenant}, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return out, nil
		}
		out = append(out, page...)
		after = page[len(page)-1].ID
		activity.RecordHeartbeat(ctx, after)
	}
}
