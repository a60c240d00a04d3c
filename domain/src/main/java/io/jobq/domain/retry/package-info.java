/**
 * Retries: {@link io.jobq.domain.retry.RetryPolicy} decides retry-after-delay or dead for every failure kind;
 * {@link io.jobq.domain.retry.BackoffPolicy} draws the delay (exponential, full jitter).
 */
package io.jobq.domain.retry;
