package io.jobq.http;

import io.javalin.http.Context;
import io.jobq.application.port.JobQuery;
import io.jobq.domain.job.StoredText;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The query string of a listing ({@code GET /jobs}, {@code GET /schedules}): each parameter at most once, none
 * unknown, no broken percent-escape, and {@code limit} as 1 to {@link JobQuery#MAX_LIMIT} (default
 * {@link JobQuery#DEFAULT_LIMIT}). Every refusal is a 400 naming the parameter.
 */
final class ListParams {
    private ListParams() {}

    /** @throws ApiException 400 for a broken escape, an unknown parameter or one given twice */
    static void requireOnly(Context ctx, Set<String> accepted) {
        requireWellFormed(ctx.queryString());
        for (var e : ctx.queryParamMap().entrySet()) {
            String shown = StoredText.excerpt(e.getKey());
            if (!accepted.contains(e.getKey())) {
                throw new ApiException(400, "unknown_field", "unknown query parameter \"" + shown + "\"; accepted: "
                        + String.join(", ", new TreeSet<>(accepted)), shown);
            }
            if (e.getValue().size() > 1) throw ApiException.invalid(shown, shown + " must be given at most once");
        }
    }

    static Optional<String> param(Context ctx, String name) {
        return Optional.ofNullable(ctx.queryParam(name));
    }

    /** @throws ApiException 400 naming {@code limit} unless it is an integer 1 to {@link JobQuery#MAX_LIMIT} */
    static int limit(Context ctx) {
        return param(ctx, "limit").map(v -> {
            // ASCII digits only: Long.parseLong would also take "+5"; 18 digits cannot overflow a long
            boolean digits = !v.isEmpty() && v.length() <= 18 && v.chars().allMatch(c -> c >= '0' && c <= '9');
            long n = digits ? Long.parseLong(v) : -1;
            if (n < 1 || n > JobQuery.MAX_LIMIT) {
                throw ApiException.invalid("limit", "limit must be an integer 1-" + JobQuery.MAX_LIMIT + ", was \"" + StoredText.excerpt(v) + "\"");
            }
            return (int) n;
        }).orElse(JobQuery.DEFAULT_LIMIT);
    }

    /**
     * Refuses a query string with a broken percent-escape ({@code limit=%zz}, {@code a=%}): the server's
     * decoder drops such a parameter silently, and a parameter must never be silently ignored.
     */
    private static void requireWellFormed(String query) {
        if (query == null) return;
        for (String pair : query.split("&")) {
            for (int i = pair.indexOf('%'); i >= 0; i = pair.indexOf('%', i + 1)) {
                if (i + 2 >= pair.length() || !HexFormat.isHexDigit(pair.charAt(i + 1)) || !HexFormat.isHexDigit(pair.charAt(i + 2))) {
                    String name = StoredText.excerpt(pair.split("=", 2)[0]);
                    throw ApiException.invalid(name, "query parameter \"" + name + "\" has a broken percent-escape (% and two hex digits)");
                }
            }
        }
    }
}
