-- jobq schema, version 8: the workers that are alive, and what they run.
--
-- Each worker upserts its row when it starts and at every heartbeat period (beat_ms), and deletes it when
-- it stops; a row is live while last_seen is within three of its periods, so a killed worker drops out on
-- its own. GET /workers lists the live ones, and enqueueing a task no live worker of its queue handles
-- answers with a warning. Rows of workers gone for a day are deleted by the next worker to start or beat.

CREATE TABLE workers (
    id          varchar(128) NOT NULL,
    queues      text[]       NOT NULL,
    tasks       text[]       NOT NULL,
    beat_ms     bigint       NOT NULL,
    started_at  timestamptz  NOT NULL DEFAULT now(),
    last_seen   timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT workers_pkey PRIMARY KEY (id),
    CONSTRAINT workers_beat_range CHECK (beat_ms >= 1 AND beat_ms <= 86400000)
);
