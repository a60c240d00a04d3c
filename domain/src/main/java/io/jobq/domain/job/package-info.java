/**
 * Jobs, their identifiers and the state machine {@link io.jobq.domain.job.JobState}. Nothing here
 * knows how jobs are stored or run.
 */
package io.jobq.domain.job;
