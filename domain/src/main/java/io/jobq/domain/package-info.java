/**
 * The pure model of jobq: jobs and their states, leases and fencing tokens, retry backoff and
 * start-time fair queueing. JDK only, by rule (ArchUnit and the module's POM enforce it): no
 * logging, no JSON, no database. Everything else in jobq depends on this package; it depends on
 * nothing.
 */
package io.jobq.domain;
