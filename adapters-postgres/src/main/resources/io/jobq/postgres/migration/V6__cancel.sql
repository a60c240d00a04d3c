-- jobq schema, version 6: cancelling jobs.
--
-- A job that is not running is cancelled at once (state 'cancelled', terminal, finished_at set). A running
-- job gets cancel_requested: its worker's next heartbeat tells the handler (a flag and an interrupt), and
-- when the run ends other than in success, or its lease expires, it becomes 'cancelled' instead of being
-- retried; a run that succeeds anyway is done, its result kept.

ALTER TABLE jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
ALTER TABLE jobs DROP CONSTRAINT jobs_state_known;
ALTER TABLE jobs ADD CONSTRAINT jobs_state_known
    CHECK (state IN ('scheduled', 'queued', 'held', 'running', 'done', 'dead', 'cancelled'));
