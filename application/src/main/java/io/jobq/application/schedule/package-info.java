/**
 * When cron schedules fire: {@link io.jobq.application.schedule.CronSchedule} reads an expression in a
 * time zone (parsed by cron-utils) and decides which tick is due, including after an outage and across
 * daylight-saving changes. Firing itself is the worker's ({@code ScheduleFirer}) and the store's job.
 */
package io.jobq.application.schedule;
