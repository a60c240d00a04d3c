-- jobq schema, version 5: fairness by work (queues.fairness = 'work').
--
-- A work queue charges a tenant a job's run time (ms) over its weight instead of 1/weight. A job's tag is
-- assigned from an estimate, the tenant's moving average of measured run times (tenants.run_ms), which the
-- job keeps as jobs.cost; when the run ends, the worker's measured time and that cost are appended to
-- measured_runs (an INSERT, so the outcome write never waits for a tenant's row lock), and the next
-- release of the tenant's held jobs, which holds that lock, folds them into its last tag and its average.
-- So that the correction reaches a tenant's backlog before it runs, a work queue keeps at most a window of
-- each tenant's jobs tagged (queued); the rest wait as 'held', counted on jobs_capped_active as a capped
-- tenant's are (jobs.capped marks every job of a work queue).

CREATE TABLE queues (
    queue      varchar(128) NOT NULL,
    fairness   text         NOT NULL DEFAULT 'jobs',
    CONSTRAINT queues_pkey PRIMARY KEY (queue),
    CONSTRAINT queues_queue_valid CHECK (jobq_valid_name(queue)),
    CONSTRAINT queues_fairness_known CHECK (fairness IN ('jobs', 'work'))
);

ALTER TABLE tenants ADD COLUMN run_ms double precision;
ALTER TABLE tenants ADD CONSTRAINT tenants_run_ms_range CHECK (run_ms IS NULL OR (run_ms >= 0 AND run_ms < 1e12));

ALTER TABLE jobs ADD COLUMN cost double precision;
ALTER TABLE jobs ADD CONSTRAINT jobs_cost_range CHECK (cost IS NULL OR (cost >= 0 AND cost < 1e12));

CREATE TABLE measured_runs (
    queue        varchar(128)     NOT NULL,
    tenant       varchar(128)     NOT NULL,
    runs         integer          NOT NULL,
    measured_ms  double precision NOT NULL,
    charged_ms   double precision NOT NULL,
    CONSTRAINT measured_runs_runs_positive CHECK (runs >= 1),
    -- Per run at most what the outcome write hands in (1e9 ms) and what a job may cost (< 1e12): so the
    -- average RELEASE folds in stays inside tenants_run_ms_range and jobs_cost_range.
    CONSTRAINT measured_runs_measured_range CHECK (measured_ms >= 0 AND measured_ms <= runs * 1e9::float8),
    CONSTRAINT measured_runs_charged_range CHECK (charged_ms >= 0 AND charged_ms < runs * 1e12::float8)
);
CREATE INDEX measured_runs_tenant ON measured_runs (queue, tenant);
