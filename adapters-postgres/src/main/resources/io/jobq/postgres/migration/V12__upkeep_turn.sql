-- jobq schema, version 12: whose turn the queue's upkeep was last.
--
-- Upkeep (reaping expired leases, promoting due jobs, releasing held ones, deleting finished jobs past
-- retention, vacuuming) is about the whole queue, not one worker's jobs. Each worker used to run it every
-- maintenance interval, so N workers made N passes a period, each of several statements: with 16 workers
-- beside PostgreSQL on 2 cores that was a fifth of the workers' CPU for no more upkeep. Now a worker whose
-- period comes takes the turn only if nobody took it within most of a period (one conditional upsert of
-- this single row), so N workers make about one pass a period between them.
--
-- One row at most (id is always true). A missing row is inserted by the next turn taken; a taken_at in the
-- future (a clock set back, a hand edit) is taken over at once, so no row can stop upkeep.

CREATE TABLE upkeep_turn (
    id        boolean       NOT NULL DEFAULT true,
    taken_by  varchar(128)  NOT NULL,
    taken_at  timestamptz   NOT NULL,
    CONSTRAINT upkeep_turn_pkey PRIMARY KEY (id),
    CONSTRAINT upkeep_turn_single_row CHECK (id)
);
