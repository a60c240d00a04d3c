/**
 * Test doubles for the ports, shipped in the application test-jar for every module's tests:
 * {@link io.jobq.application.fake.InMemoryJobStore} (the whole {@code JobStore} on one lock),
 * {@link io.jobq.application.fake.ManualWakeupChannel}, {@link io.jobq.application.fake.ManualClock};
 * {@link io.jobq.application.fake.Await} and {@link io.jobq.application.fake.Json}, the shared test
 * helpers. Production code must never depend on this package.
 */
package io.jobq.application.fake;
