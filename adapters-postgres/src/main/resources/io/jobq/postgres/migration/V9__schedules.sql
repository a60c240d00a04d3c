-- jobq schema, version 9: cron schedules.
--
-- A schedule enqueues one job per tick of its cron expression (read in its time zone). Every worker
-- process tries to fire due ticks; exactly one job per tick comes out because firing a tick (one
-- transaction) advances schedules.last_tick only forward and inserts (schedule, tick) into
-- schedule_ticks, whose primary key refuses a second row for the same tick: no leader is needed.
-- revision is drawn from a sequence at every PUT (a deleted and re-created schedule gets a new one too),
-- so a firer that read the schedule before it was replaced or re-created fires nothing.
-- Fired ticks older than an hour before the latest are deleted as new ones fire (last_tick alone keeps
-- old ticks from firing again); deleting a schedule deletes its ticks, not the jobs they enqueued.

CREATE SEQUENCE schedule_revisions;

CREATE TABLE schedules (
    name          varchar(128)  NOT NULL,
    cron          varchar(200)  NOT NULL,
    timezone      varchar(64)   NOT NULL,
    tenant        varchar(128)  NOT NULL,
    queue         varchar(128)  NOT NULL,
    task          varchar(128)  NOT NULL,
    payload       jsonb         NOT NULL,
    max_attempts  integer       NOT NULL,
    revision      bigint        NOT NULL,
    created_at    timestamptz   NOT NULL DEFAULT now(),
    updated_at    timestamptz   NOT NULL DEFAULT now(),
    last_tick     timestamptz,
    last_job      bigint,
    CONSTRAINT schedules_pkey PRIMARY KEY (name),
    CONSTRAINT schedules_max_attempts_range CHECK (max_attempts BETWEEN 1 AND 100),
    CONSTRAINT schedules_revision_positive CHECK (revision >= 1)
);

CREATE TABLE schedule_ticks (
    schedule  varchar(128)  NOT NULL,
    tick      timestamptz   NOT NULL,
    job_id    bigint        NOT NULL,
    fired_at  timestamptz   NOT NULL DEFAULT now(),
    CONSTRAINT schedule_ticks_pkey PRIMARY KEY (schedule, tick),
    CONSTRAINT schedule_ticks_schedule_fkey FOREIGN KEY (schedule) REFERENCES schedules (name) ON DELETE CASCADE
);

-- [jooq ignore start]
-- A row written by hand gets a revision of its own too.
ALTER TABLE schedules ALTER COLUMN revision SET DEFAULT nextval('schedule_revisions');
-- The same rules as jobs' (schema V2): names the domain can read, a payload PostgreSQL can hand back.
ALTER TABLE schedules
    ADD CONSTRAINT schedules_name_valid CHECK (jobq_valid_name(name)),
    ADD CONSTRAINT schedules_tenant_valid CHECK (jobq_valid_name(tenant)),
    ADD CONSTRAINT schedules_queue_valid CHECK (jobq_valid_name(queue)),
    ADD CONSTRAINT schedules_task_valid CHECK (jobq_valid_name(task)),
    ADD CONSTRAINT schedules_payload_readable CHECK (jobq_payload_problem(payload) IS NULL);
-- [jooq ignore stop]
