-- jobq schema, version 1: tenants (fair-queueing state per queue) and jobs.
--
-- Names and keys are varchar(n), not text: the lengths are the API's limits, enforced here too, and
-- jOOQ's DDLDatabase (which reads this file through H2 at build time) cannot index text columns.

-- One row per (queue, tenant): the tenant's weight and the start tag of its latest runnable job.
-- Enqueue and promotion lock this row (and only this one) to hand out the tenant's next tags, so one
-- tenant's concurrent enqueues get distinct, increasing tags while different tenants never wait for
-- each other.
CREATE TABLE tenants (
    queue      varchar(128)     NOT NULL,
    tenant     varchar(128)     NOT NULL,
    weight     double precision NOT NULL DEFAULT 1,
    last_vtime double precision NOT NULL DEFAULT 0,
    CONSTRAINT tenants_pkey PRIMARY KEY (queue, tenant),
    -- NaN compares greater than every number in PostgreSQL, so an upper bound also keeps NaN out.
    CONSTRAINT tenants_weight_range CHECK (weight >= 0.000001 AND weight <= 1000000),
    CONSTRAINT tenants_last_vtime_finite CHECK (last_vtime >= 0 AND last_vtime < 1e300)
);

-- V(queue) falls back to the highest tag handed out in the queue when nothing is queued; this index
-- answers max(last_vtime) per queue without a scan.
CREATE INDEX tenants_queue_last_vtime ON tenants (queue, last_vtime);

CREATE TABLE jobs (
    id              bigint GENERATED ALWAYS AS IDENTITY,
    queue           varchar(128)     NOT NULL,
    tenant          varchar(128)     NOT NULL,
    task            varchar(128)     NOT NULL,
    payload         jsonb            NOT NULL DEFAULT '{}',
    result          jsonb,
    state           varchar(16)      NOT NULL,
    vtime           double precision,
    run_at          timestamptz      NOT NULL DEFAULT now(),
    attempts        integer          NOT NULL DEFAULT 0,
    max_attempts    integer          NOT NULL DEFAULT 5,
    locked_by       varchar(128),
    locked_until    timestamptz,
    last_error      text,
    idempotency_key varchar(255),
    created_at      timestamptz      NOT NULL DEFAULT now(),
    started_at      timestamptz,
    finished_at     timestamptz,
    CONSTRAINT jobs_pkey PRIMARY KEY (id),
    -- every job's tenant row exists, so promotion and retry can always lock it
    CONSTRAINT jobs_tenant_fkey FOREIGN KEY (queue, tenant) REFERENCES tenants (queue, tenant),
    CONSTRAINT jobs_state_known CHECK (state IN ('scheduled', 'queued', 'running', 'done', 'dead')),
    CONSTRAINT jobs_attempts_nonnegative CHECK (attempts >= 0),
    CONSTRAINT jobs_max_attempts_positive CHECK (max_attempts >= 1),
    -- a lease (owner and expiry) exists exactly while the job is running
    CONSTRAINT jobs_lease_iff_running CHECK (
        (state = 'running' AND locked_by IS NOT NULL AND locked_until IS NOT NULL)
        OR (state <> 'running' AND locked_by IS NULL AND locked_until IS NULL)),
    -- a runnable job always has its fair start tag
    CONSTRAINT jobs_queued_has_vtime CHECK (state <> 'queued' OR vtime IS NOT NULL)
);

-- Partial indexes: each query touches only the rows it can match, however many finished jobs pile up.
-- runnable: the fair claim rides this index in (vtime, id) order within a queue.
CREATE INDEX jobs_runnable ON jobs (queue, vtime, id) WHERE state = 'queued';
-- runnable in arrival order: only the FIFO claim order (kept for the benchmarks) uses it.
CREATE INDEX jobs_runnable_fifo ON jobs (queue, id) WHERE state = 'queued';
-- due: promotion of scheduled jobs whose run_at has passed.
CREATE INDEX jobs_due ON jobs (run_at) WHERE state = 'scheduled';
-- leases: reaping running jobs whose lease expired.
CREATE INDEX jobs_leases ON jobs (locked_until) WHERE state = 'running';
-- idempotency keys are scoped per tenant: one tenant can neither collide with nor discover another's.
CREATE UNIQUE INDEX jobs_idempotency ON jobs (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- listing a tenant's jobs newest first (GET /jobs?tenant=…).
CREATE INDEX jobs_tenant_id ON jobs (tenant, id);
