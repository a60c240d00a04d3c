package io.jobq.http;

import io.jobq.domain.job.StoredText;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reading a request (its body, path and query parameters) into validated values is the one phase in
 * which whatever goes wrong is the input's doing: the routes run it through {@link #read}, so an
 * exception no check foresaw still answers 400, never 500. 5xx stays for faults of the server itself,
 * which can only happen after the input was read (the store unreachable, a bug in writing the answer).
 */
final class Inputs {
    private static final Logger log = LoggerFactory.getLogger(Inputs.class);

    private Inputs() {}

    /**
     * Runs {@code reading}: an {@link ApiException} passes unchanged; any other runtime exception means
     * a check is missing, so it is logged (with a reference id and the stack trace, to be fixed) and
     * answered 400 {@code bad_request}, quoting at most a short prefix of its message.
     */
    static <T> T read(Supplier<T> reading) {
        try {
            return reading.get();
        } catch (ApiException e) {
            throw e;
        } catch (RuntimeException e) {
            String ref = UUID.randomUUID().toString();
            log.warn("a request was refused by an exception no check foresaw (ref {})", ref, e);
            throw new ApiException(400, "bad_request", "the request could not be read (" + e.getClass().getSimpleName() + ": "
                    + StoredText.excerpt(String.valueOf(e.getMessage())) + "; ref " + ref + ")", null);
        }
    }

    /**
     * For an endpoint that takes no query parameters: any given is refused, so a typo such as
     * {@code ?queue=} on {@code /stats} is never mistaken for a filter that worked. Read from the raw query
     * string, so a malformed one is refused the same way.
     *
     * @throws ApiException 400 {@code unknown_field} naming the first parameter (a short excerpt of it)
     */
    static void requireNoQuery(io.javalin.http.Context ctx) {
        String q = ctx.queryString();
        if (q == null || q.isEmpty()) return;
        String shown = StoredText.excerpt(q.split("[&=]", 2)[0]);
        throw new ApiException(400, "unknown_field", "unknown query parameter \"" + shown + "\"; this endpoint takes none", shown);
    }
}
