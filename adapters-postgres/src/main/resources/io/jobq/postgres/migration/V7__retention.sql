-- jobq schema, version 7: retention of finished jobs, per queue.
--
-- Maintenance deletes done, dead and cancelled jobs once they have been finished longer than their queue
-- keeps them (0 = for ever), in bounded batches of short transactions. A queue without a queues row keeps
-- done and cancelled jobs 7 days and dead ones 30 (the column defaults). jobs_finished lets each batch
-- find a queue's oldest finished jobs of one state without reading the rest of the table.

ALTER TABLE queues ADD COLUMN keep_done_s bigint NOT NULL DEFAULT 604800;
ALTER TABLE queues ADD COLUMN keep_dead_s bigint NOT NULL DEFAULT 2592000;
ALTER TABLE queues ADD COLUMN keep_cancelled_s bigint NOT NULL DEFAULT 604800;
ALTER TABLE queues ADD CONSTRAINT queues_keep_range CHECK (
    keep_done_s BETWEEN 0 AND 3153600000 AND keep_dead_s BETWEEN 0 AND 3153600000 AND keep_cancelled_s BETWEEN 0 AND 3153600000);

CREATE INDEX jobs_finished ON jobs (queue, state, finished_at) WHERE state IN ('done', 'dead', 'cancelled');
