-- A tool call and its result carry the agent's ID for the call, so that
-- parallel calls of one tool are told apart; events stored before this
-- have none (their calls are paired by tool name, as before).
-- note: events stored before this migration have no call_id; their calls and results are paired by tool name
ALTER TABLE events ADD COLUMN IF NOT EXISTS call_id String DEFAULT '' AFTER error;

-- An episode carries the identity of the repository its session worked
-- in (a remote, a root commit or a directory), so that the worktrees of
-- one repository are one project, and the repository's name. Episodes
-- stored before this name their project only as an entity, and are still
-- found by that name.
-- note: episodes stored before this migration have no project identity; recent sessions find them by the project's name
ALTER TABLE episodes ADD COLUMN IF NOT EXISTS project String DEFAULT '' AFTER extractor;
ALTER TABLE episodes ADD COLUMN IF NOT EXISTS project_name String DEFAULT '' AFTER project;

ALTER TABLE episodes_archive ADD COLUMN IF NOT EXISTS project String DEFAULT '' AFTER extractor;
ALTER TABLE episodes_archive ADD COLUMN IF NOT EXISTS project_name String DEFAULT '' AFTER project;
