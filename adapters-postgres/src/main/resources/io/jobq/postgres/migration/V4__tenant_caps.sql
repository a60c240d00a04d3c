-- jobq schema, version 4: per-tenant concurrency caps (tenants.max_running) and the held state.
--
-- The invariant, for a tenant with a cap in a queue: its jobs there that are queued or running number at
-- most max_running. Claims take only queued jobs, so no claim can start a job beyond the cap, and the claim
-- statement needs no counter, no tenant lock and no check: it is the same SKIP LOCKED index scan for every
-- tenant. A capped tenant's runnable jobs beyond the cap wait as 'held', outside jobs_runnable, and are
-- released (oldest first, each with a fresh fair tag) when the tenant's count drops: see CapRelease.
--
-- capped marks the jobs of tenants with a cap, so that counting a tenant's queued and running jobs rides a
-- small partial index (jobs_capped_active) that jobs of uncapped tenants never enter: they pay nothing.

ALTER TABLE tenants ADD COLUMN max_running integer;
ALTER TABLE tenants ADD CONSTRAINT tenants_max_running_range CHECK (max_running IS NULL OR (max_running >= 1 AND max_running <= 1000000));

ALTER TABLE jobs ADD COLUMN capped boolean NOT NULL DEFAULT false;
ALTER TABLE jobs DROP CONSTRAINT jobs_state_known;
ALTER TABLE jobs ADD CONSTRAINT jobs_state_known CHECK (state IN ('scheduled', 'queued', 'held', 'running', 'done', 'dead'));

-- The tenants that have a cap: the maintenance sweep that releases held jobs looks only at these.
CREATE INDEX tenants_capped ON tenants (queue, tenant) WHERE max_running IS NOT NULL;
-- A capped tenant's held jobs, oldest first: what a release takes.
CREATE INDEX jobs_held ON jobs (queue, tenant, id) WHERE state = 'held';
-- A capped tenant's queued and running jobs: what a release counts.
CREATE INDEX jobs_capped_active ON jobs (queue, tenant) WHERE capped AND state IN ('queued', 'running');
