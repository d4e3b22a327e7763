-- Memory scopes: whose each memory is within its tenant. "shared" is the
-- tenant's shared space, "user:ID" one user's and "agent:ID" one agent's.
-- Every memory stored before scopes existed was in the one pool every
-- caller saw, so it keeps that meaning: the column's default is "shared".
-- note: memories stored before this migration are in the shared scope
ALTER TABLE memory_versions ADD COLUMN IF NOT EXISTS scope LowCardinality(String) DEFAULT 'shared' AFTER version;

ALTER TABLE memories_current ADD COLUMN IF NOT EXISTS scope LowCardinality(String) DEFAULT 'shared' AFTER version;

-- The view copies named columns, so it is replaced to copy the scope too.
DROP VIEW IF EXISTS memories_current_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS memories_current_mv TO memories_current AS
SELECT tenant, id, version, scope, kind, content, counter_example, task_type, entities, content_hash,
       confidence, sources, evidence, status, superseded_by, supersedes, valid_from, valid_to,
       decay, decay_anchor, pinned, flags, helped, hurt, reason, decision_id, created_at,
       updated_at, write_seq
FROM memory_versions;
