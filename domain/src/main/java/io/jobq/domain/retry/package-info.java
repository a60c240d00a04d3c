/** Retry timing: exponential backoff with full jitter. */
package io.jobq.domain.retry;
