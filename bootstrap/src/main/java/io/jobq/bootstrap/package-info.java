/**
 * The {@code jobq} launcher: reads configuration ({@link io.jobq.bootstrap.Settings}, the only reader
 * of environment variables), wires the adapters to the application, and runs one of the roles
 * migrate, api, worker or all. The only package that knows every adapter.
 */
package io.jobq.bootstrap;
