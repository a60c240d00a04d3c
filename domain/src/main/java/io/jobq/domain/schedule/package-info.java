/** Cron schedules: the name that identifies one. */
package io.jobq.domain.schedule;
