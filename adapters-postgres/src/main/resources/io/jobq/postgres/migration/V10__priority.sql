-- jobq schema, version 10: priorities within a tenant.
--
-- A job's priority (0-9, higher first, default 0) orders its tenant's own jobs; it never changes what a
-- tenant gets against other tenants. Start tags still decide when a tenant's turn comes; an enqueue of a
-- job with priority gives it the earliest of its tenant's queued tags held by lower-priority jobs, and
-- moves those jobs one tag later each (the last takes the new job's own tag), so the tenant's set of tags
-- is exactly the one the enqueue would have made without priority. Held jobs are released highest
-- priority first.

ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD CONSTRAINT jobs_priority_range CHECK (priority BETWEEN 0 AND 9);

-- A tenant's held jobs in the order a release takes them: highest priority, then oldest.
CREATE INDEX jobs_held_by_priority ON jobs (queue, tenant, priority DESC, id) WHERE state = 'held';
DROP INDEX jobs_held;
