package io.jobq.application.worker;

import io.jobq.domain.retry.FailureKind;
import java.util.Objects;
import java.util.Optional;

/** What one run came to, before {@link OutcomeRecorder} records it. */
sealed interface Outcome {

    /** The handler returned; {@code resultJson} is its result as JSON text, if it gave one. */
    record Succeeded(Optional<String> resultJson) implements Outcome {
        public Succeeded {
            Objects.requireNonNull(resultJson, "resultJson");
        }
    }

    /**
     * The run failed.
     *
     * @param error what went wrong, as it will be stored in {@code last_error} (sanitised on the way)
     * @param kind how the retry policy is to treat it
     * @param cause the handler's throwable, or null for a failure the worker found itself (no handler,
     *     timeout, a payload that is not JSON): only a cause gets a stack trace in the log
     */
    record Failed(String error, FailureKind kind, Throwable cause) implements Outcome {
        public Failed {
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(kind, "kind");
        }
    }
}
