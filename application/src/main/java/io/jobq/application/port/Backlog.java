package io.jobq.application.port;

import io.jobq.domain.job.QueueName;
import io.jobq.domain.tenant.TenantId;

/** How many runnable (queued) jobs one tenant has waiting in one queue. */
public record Backlog(QueueName queue, TenantId tenant, long queued) {}
