-- jobq schema, version 2: the schema refuses the rows the code cannot handle, whoever writes them (the
-- API, the Java client, raw SQL), and rows already there that break the new rules are quarantined so
-- the constraints can be validated. docs/notes-rows.md explains each rule and what it protects.
--
-- The rules, and the domain constants they mirror (SchemaRulesTest pins the numbers to them):
--   * task, tenant, queue: 1-128 characters of [A-Za-z0-9_.:-] (io.jobq.domain.job.Identifier), in jobs
--     and tenants. A claimed row whose task the code cannot parse would fail the whole claim's mapping.
--   * vtime: NULL, or finite and >= 0, the same bounds as tenants.last_vtime. One queued 'Infinity' made
--     V(queue) infinite, so every enqueue to that queue and every promotion failed a CHECK.
--   * payload: at most 8 MiB as stored (pg_column_size: jsonb's binary form of a payload takes up to 6x
--     its JSON text, measured with [0,0,...], so 8 x Job.MAX_PAYLOAD_BYTES fits every payload the domain
--     accepts); no number that prints with more than 1,000 digits (JsonNumbers.MAX_NUMBER_LENGTH); all its
--     numbers together print in at most 2 MiB (Job.MAX_PAYLOAD_BYTES + JsonNumbers.MAX_RENDERED_GROWTH).
--     jsonb keeps numbers compactly but prints them in plain notation: 8,200 x 1e131071 is 66 kB of JSON
--     and over 1 GB of text, which no statement returning the row can build ("out of memory").
--
-- jOOQ's DDLDatabase reads this script through H2, which knows neither plpgsql nor PostgreSQL's regular
-- expressions: the parts between "[jooq ignore start]" and "[jooq ignore stop]" are PostgreSQL-only
-- (parseIgnoreComments in adapters-postgres/pom.xml). jOOQ needs only the tables and indexes anyway.

-- Runs in Flyway's transaction. Lock both tables first, so no write can slip in between quarantining the
-- rows that break a rule and adding the constraint (tenants before jobs, the order enqueue takes them).
-- The whole migration is sequential scans plus updates of the offending rows only: no table rewrite.
-- [jooq ignore start]
LOCK TABLE tenants, jobs IN ACCESS EXCLUSIVE MODE;
-- [jooq ignore stop]

-- Rows the migration had to take out of jobs and tenants because no value of theirs could be kept (an
-- invalid name: a constraint on it cannot hold while the row stays). The whole row is kept as jsonb
-- (to_jsonb copies jsonb columns without printing them), so nothing is lost; see docs/notes-rows.md.
CREATE TABLE quarantined_rows (
    id             bigint       GENERATED ALWAYS AS IDENTITY,
    table_name     varchar(64)  NOT NULL,
    row_data       jsonb        NOT NULL,
    reason         text         NOT NULL,
    quarantined_at timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT quarantined_rows_pkey PRIMARY KEY (id)
);

-- [jooq ignore start]
-- Identifier's rule. The class is spelled out rather than written as ranges (A-Z), so no collation can
-- widen it. An SQL function with a plain expression body is inlined into the CHECKs (about 0.5 us a name).
CREATE FUNCTION jobq_valid_name(name text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN length(name) BETWEEN 1 AND 128
        AND name !~ '[^ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-]';

-- Why PostgreSQL could not hand this payload back (NULL when it can). Never prints the payload: it walks
-- the numbers (jsonpath), and prints one number only once it is known to be at most 2,002 characters.
-- Digits of a number as printed = integer digits + scale, as JsonNumbers counts them. Cost, measured on
-- PostgreSQL 15: about 3 us for a payload without numbers, about 30 us for a small one with numbers,
-- about 2.5 us per number beyond that (250 ms for 100,000 numbers).
CREATE FUNCTION jobq_payload_problem(payload jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$
DECLARE
    longest bigint;
    printed bigint;
BEGIN
    IF pg_column_size(payload) > 8388608 THEN
        RETURN format('payload takes %s bytes as jsonb, more than 8388608 (8 MiB)', pg_column_size(payload));
    END IF;
    IF NOT jsonb_path_exists(payload, 'strict $.** ? (@.type() == "number")') THEN
        RETURN NULL;
    END IF;
    SELECT max(digits), sum(digits + (n < 0)::int + (scale(n) > 0)::int)
    INTO longest, printed
    FROM (SELECT n, CASE WHEN abs(n) >= 1e1000 OR scale(n) > 1000 THEN 1001
                         ELSE length(trunc(abs(n))::text) + scale(n) END AS digits
          FROM (SELECT e::numeric AS n
                FROM jsonb_array_elements(jsonb_path_query_array(payload, 'strict $.** ? (@.type() == "number")')) AS e
               ) AS numbers
         ) AS measured;
    IF longest > 1000 THEN
        RETURN 'payload holds a number that PostgreSQL would print with more than 1000 digits (e.g. 1e1000 or'
            || ' 1e131071), which no worker can parse';
    END IF;
    IF printed > 2097152 THEN
        RETURN format('payload holds numbers that PostgreSQL would print as %s bytes, more than 2097152 (2 MiB)', printed);
    END IF;
    RETURN NULL;
END
$fn$;

-- 1. Rows with an invalid name leave the tables, into quarantined_rows: jobs first, then the tenants rows
--    (only jobs with the same invalid queue or tenant can reference those, and they are gone by then).
WITH moved AS (
    DELETE FROM jobs j
    WHERE NOT (jobq_valid_name(j.task) AND jobq_valid_name(j.tenant) AND jobq_valid_name(j.queue))
    RETURNING j.*
)
INSERT INTO quarantined_rows (table_name, row_data, reason)
SELECT 'jobs', to_jsonb(moved), 'schema migration V2: ' || concat_ws('; ',
           CASE WHEN NOT jobq_valid_name(moved.task) THEN format('task %L is not a valid name', left(moved.task, 200)) END,
           CASE WHEN NOT jobq_valid_name(moved.tenant) THEN format('tenant %L is not a valid name', left(moved.tenant, 200)) END,
           CASE WHEN NOT jobq_valid_name(moved.queue) THEN format('queue %L is not a valid name', left(moved.queue, 200)) END)
       || ' (names are 1-128 characters of [A-Za-z0-9_.:-])'
FROM moved;

WITH moved AS (
    DELETE FROM tenants t
    WHERE NOT (jobq_valid_name(t.tenant) AND jobq_valid_name(t.queue))
    RETURNING t.*
)
INSERT INTO quarantined_rows (table_name, row_data, reason)
SELECT 'tenants', to_jsonb(moved), 'schema migration V2: ' || concat_ws('; ',
           CASE WHEN NOT jobq_valid_name(moved.tenant) THEN format('tenant %L is not a valid name', left(moved.tenant, 200)) END,
           CASE WHEN NOT jobq_valid_name(moved.queue) THEN format('queue %L is not a valid name', left(moved.queue, 200)) END)
       || ' (names are 1-128 characters of [A-Za-z0-9_.:-])'
FROM moved;

-- 2. A start tag that is not a finite number >= 0 is dropped. A queued job cannot stay queued without
--    one: it is quarantined as dead, and a retry queues it again with a fresh tag. Elsewhere the tag is
--    history only (promotion and retry hand out new ones). NOT (x >= 0 AND x < 1e300) holds for NaN too.
UPDATE jobs SET
    state       = CASE WHEN state = 'queued' THEN 'dead' ELSE state END,
    finished_at = CASE WHEN state = 'queued' THEN now() ELSE finished_at END,
    last_error  = CASE WHEN state = 'queued'
                       THEN format('quarantined by schema migration V2: vtime %s is not a finite number >= 0;'
                                   ' POST /jobs/%s/retry queues the job again with a fresh tag', vtime, id)
                       ELSE last_error END,
    vtime       = NULL
WHERE NOT (vtime >= 0 AND vtime < 1e300);

-- 3. Jobs still to run whose payload PostgreSQL cannot hand back: quarantined as dead (a claim would fail
--    on them). Done and dead rows keep theirs; reads cope (docs/notes-rows.md). Only live rows are walked.
UPDATE jobs SET
    state = 'dead', finished_at = now(), locked_by = NULL, locked_until = NULL,
    last_error = 'quarantined by schema migration V2: ' || jobq_payload_problem(payload)
WHERE state IN ('scheduled', 'queued', 'running') AND jobq_payload_problem(payload) IS NOT NULL;

-- 4. The rules. Every row passes now, so the constraints are added validated (one scan each, no rewrite).
--    CHECKs run on every INSERT and UPDATE of the row: about 2 us a row for these four, measured.
ALTER TABLE tenants
    ADD CONSTRAINT tenants_queue_valid CHECK (jobq_valid_name(queue)),
    ADD CONSTRAINT tenants_tenant_valid CHECK (jobq_valid_name(tenant));
ALTER TABLE jobs
    ADD CONSTRAINT jobs_task_valid CHECK (jobq_valid_name(task)),
    ADD CONSTRAINT jobs_tenant_valid CHECK (jobq_valid_name(tenant)),
    ADD CONSTRAINT jobs_queue_valid CHECK (jobq_valid_name(queue));
-- [jooq ignore stop]
-- NaN compares greater than every number in PostgreSQL, so the upper bound also keeps NaN out.
ALTER TABLE jobs ADD CONSTRAINT jobs_vtime_finite CHECK (vtime IS NULL OR (vtime >= 0 AND vtime < 1e300));
-- [jooq ignore start]

-- The payload rule is a trigger, not a CHECK: a CHECK is evaluated on every UPDATE of the row, so each
-- claim, heartbeat and completion would walk (and detoast) the payload again. The trigger runs only when
-- a payload is written. It raises check_violation (23514) naming jobs_payload_readable, as a CHECK would.
-- The call is qualified with the schema Flyway migrates (a placeholder), because a trigger's body finds
-- functions through the search_path of whoever writes, and a raw INSERT INTO <schema>.jobs may come
-- with another (SET search_path on the function would cost about 5 us an insert, measured).
CREATE FUNCTION jobq_refuse_unreadable_payload() RETURNS trigger
    LANGUAGE plpgsql
AS $fn$
DECLARE
    problem text := "${flyway:defaultSchema}".jobq_payload_problem(NEW.payload);
BEGIN
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION '%', problem
            USING ERRCODE = 'check_violation', CONSTRAINT = 'jobs_payload_readable', TABLE = 'jobs', COLUMN = 'payload';
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER jobs_payload_readable BEFORE INSERT OR UPDATE OF payload ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobq_refuse_unreadable_payload();
-- [jooq ignore stop]

-- Promotion works queue by queue (so one queue's bad row cannot block another's): it finds the queues
-- with scheduled jobs by a skip scan of this index and takes each queue's due jobs in run_at order from
-- it. It replaces jobs_due (run_at), which served the promotion across all queues.
CREATE INDEX jobs_due_by_queue ON jobs (queue, run_at) WHERE state = 'scheduled';
DROP INDEX jobs_due;
