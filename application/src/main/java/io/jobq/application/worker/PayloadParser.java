package io.jobq.application.worker;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.jobq.domain.job.Job;
import io.jobq.domain.retry.FailureKind;
import java.util.Objects;
import java.util.Optional;

/** Parses a claimed job's payload once, before its run starts, and says why a payload cannot be run. */
final class PayloadParser {
    private final ObjectMapper mapper;

    PayloadParser(ObjectMapper mapper) {
        this.mapper = Objects.requireNonNull(mapper, "mapper");
    }

    /**
     * A parsed payload, or the failure the run will record instead of calling its handler.
     *
     * @param node the payload, or {@link MissingNode} when it could not be parsed
     * @param failure why the run cannot start: {@link FailureKind#PERMANENT} when the payload itself is at
     *     fault (empty, not JSON), so retrying cannot help; {@link FailureKind#ERROR} when the worker is
     *     (a broken class path, a custom mapper's bug)
     */
    record Parsed(JsonNode node, Optional<Outcome.Failed> failure) {}

    /**
     * Parses {@code job}'s payload.
     *
     * @throws Error an error for which {@link FatalErrorPolicy#isFatal} holds: the JVM's trouble, not the
     *     payload's; the caller hands it to the policy
     */
    Parsed parse(Job job) {
        try {
            JsonNode node = mapper.readTree(job.payload());
            if (node == null || node.isMissingNode()) return failed("payload of job " + job.id() + " is empty, not JSON",
                    FailureKind.PERMANENT);
            return new Parsed(node, Optional.empty());
        } catch (JacksonException e) {
            return failed("payload of job " + job.id() + " is not valid JSON: " + e.getOriginalMessage(), FailureKind.PERMANENT);
        } catch (RuntimeException | Error e) {
            if (FatalErrorPolicy.isFatal(e)) throw e;
            return failed("payload of job " + job.id() + " could not be parsed: " + Failures.describe(e), FailureKind.ERROR);
        }
    }

    private static Parsed failed(String error, FailureKind kind) {
        return new Parsed(MissingNode.getInstance(), Optional.of(new Outcome.Failed(error, kind, null)));
    }
}
