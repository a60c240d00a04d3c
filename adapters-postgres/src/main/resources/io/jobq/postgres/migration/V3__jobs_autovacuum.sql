-- jobq schema, version 3: autovacuum settings for the jobs table (storage parameters, so they apply to
-- jobq's table only, whatever the server's defaults are).
--
-- Every job leaves dead row versions behind (a claim and a completion each write a new version; so does
-- every heartbeat), and dead entries in the partial index jobs_runnable are what a claim walks over until
-- VACUUM removes them (docs/notes-bloat.md). The server's defaults vacuum a table once 20 % of its rows are
-- dead: with 1,000,000 finished jobs kept, 200,050 dead versions, hours apart at low traffic.
--
-- autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000: vacuum at 1 % dead (11,000 dead
--   versions at 1,000,000 rows). Cheap on this table: finished jobs sit on all-visible pages that VACUUM
--   skips (measured: 0.3 s for 140,000 dead versions in a 1,150,000-row table, indexes included), and
--   when under 2 % of the pages hold dead versions PostgreSQL 14+ skips the index pass altogether.
-- autovacuum_analyze_scale_factor = 0.02: the mix of states swings fast (a backlog of queued jobs becomes
--   done within minutes); fresher statistics keep the planner's estimates for state = ... and the
--   done/dead estimate of /stats (which scales by the row count ANALYZE and VACUUM record) close.
-- Not set: fillfactor. No jobq update can be HOT (each changes state, which every partial index's WHERE
--   names, or locked_until, which jobs_leases indexes): measured 0 HOT of 60,000 updates, so free space kept
--   on each page would only make the table larger. autovacuum_vacuum_insert_scale_factor: inserted jobs are
--   updated moments later anyway, so the update threshold above already triggers vacuum.
-- tenants keeps the defaults: one row per (queue, tenant), so 50 + 20 % of a few rows is already small.
--
-- This matters only where autovacuum runs. Where it is off (autovacuum = off, or track_counts = off), jobq's
-- workers vacuum the table themselves once dead versions pass the same threshold (JOBQ_SELF_VACUUM), and
-- log a warning saying so.
--
-- jOOQ's DDLDatabase cannot parse storage parameters; the markers hide this statement from it (code
-- generation needs no storage settings), PostgreSQL reads them as comments.
-- [jooq ignore start]
ALTER TABLE jobs SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02
);
-- [jooq ignore stop]
