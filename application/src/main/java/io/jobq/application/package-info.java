/**
 * The application layer: ports that adapters implement ({@link io.jobq.application.port}), and the
 * worker runtime that drives them. Depends on {@code io.jobq.domain}, the JDK, SLF4J's API and
 * Jackson's tree model (handlers receive payloads as {@code JsonNode}); never on an adapter.
 */
package io.jobq.application;
