package io.jobq.application.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jobq.domain.job.TaskName;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The tasks every worker knows, for smoke tests, demos and the benchmarks:
 *
 * <table>
 *   <caption>built-in tasks</caption>
 *   <tr><th>task</th><th>payload</th><th>result</th></tr>
 *   <tr><td>{@code word_count}</td><td>{@code {"text": "hello job queue"}}</td><td>{@code {"words": 3}}</td></tr>
 *   <tr><td>{@code noop}</td><td>anything</td><td>none</td></tr>
 *   <tr><td>{@code sleep}</td><td>{@code {"ms": 250}} (0..86,400,000)</td><td>{@code {"slept_ms": 250}}</td></tr>
 *   <tr><td>{@code fail}</td><td>{@code {"times": 2, "permanent": false, "message": "…"}}</td>
 *       <td>{@code {"succeeded_on_attempt": 3}}</td></tr>
 * </table>
 *
 * A payload that does not fit its task's shape is a {@link PermanentJobFailure}.
 */
public final class BuiltInHandlers implements JobHandlerProvider {
    /** Longest {@code sleep} accepted: 24 h (86,400,000 ms). */
    public static final Duration MAX_SLEEP = Duration.ofDays(1);

    /** How often {@code sleep} re-checks {@link JobContext#isCancelled()}: 50 ms. */
    static final Duration CANCEL_CHECK = Duration.ofMillis(50);

    /** Registered by {@link HandlerRegistry#withBuiltIns()}; public for {@link java.util.ServiceLoader}. */
    public BuiltInHandlers() {}

    /** The built-ins take no settings. */
    @Override
    public Map<TaskName, JobHandler> handlers(HandlerSettings settings) {
        Map<TaskName, JobHandler> all = new LinkedHashMap<>();
        all.put(TaskName.of("word_count"), BuiltInHandlers::wordCount);
        all.put(TaskName.of("noop"), ctx -> Optional.empty());
        all.put(TaskName.of("sleep"), BuiltInHandlers::sleep);
        all.put(TaskName.of("fail"), BuiltInHandlers::fail);
        return all;
    }

    /** {@code word_count}'s payload. */
    public record WordCountPayload(String text) {
        public WordCountPayload {
            if (text == null) throw new IllegalArgumentException("text is required");
        }
    }

    /** {@code sleep}'s payload: how long to sleep, in milliseconds. */
    public record SleepPayload(long ms) {
        public SleepPayload {
            if (ms < 0 || ms > MAX_SLEEP.toMillis()) {
                throw new IllegalArgumentException("ms must be 0-" + MAX_SLEEP.toMillis() + ", was " + ms);
            }
        }
    }

    /**
     * {@code fail}'s payload: fail while the attempt is at most {@code times}, then succeed.
     *
     * @param times how many attempts fail; 0..100 (absent: 1)
     * @param permanent whether the failure is a {@link PermanentJobFailure} (absent: false)
     * @param message the failure's message (absent: a generated one)
     */
    public record FailPayload(Integer times, Boolean permanent, String message) {
        public FailPayload {
            if (times == null) times = 1;
            if (permanent == null) permanent = false;
            if (times < 0 || times > 100) throw new IllegalArgumentException("times must be 0-100, was " + times);
        }
    }

    /**
     * Counts whitespace-separated words (any Unicode space, as Python's {@code str.split()} does).
     * {@code "hello job queue"} gives 3; {@code "  a \t b\n"} gives 2; {@code ""} gives 0.
     */
    public static int countWords(String text) {
        int words = 0;
        boolean inWord = false;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            boolean space = Character.isWhitespace(cp) || Character.isSpaceChar(cp);
            if (!space && !inWord) words++;
            inWord = !space;
            i += Character.charCount(cp);
        }
        return words;
    }

    private static Optional<JsonNode> wordCount(JobContext ctx) {
        WordCountPayload payload = ctx.payloadAs(WordCountPayload.class);
        ObjectNode result = JsonNodeFactory.instance.objectNode().put("words", countWords(payload.text()));
        return Optional.of(result);
    }

    /**
     * Sleeps in slices of at most {@link #CANCEL_CHECK}, so a cancelled run (lease lost) stops within
     * 50 ms even though a lost lease does not interrupt; an interrupt (timeout, shutdown) stops it at once.
     */
    private static Optional<JsonNode> sleep(JobContext ctx) throws InterruptedException {
        SleepPayload payload = ctx.payloadAs(SleepPayload.class);
        long deadline = System.nanoTime() + Duration.ofMillis(payload.ms()).toNanos();
        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
            if (ctx.isCancelled()) {
                throw new InterruptedException("sleep cancelled: " + ctx.cancellationReason().orElse("cancelled"));
            }
            Thread.sleep(Duration.ofNanos(Math.min(left, CANCEL_CHECK.toNanos())));
        }
        return Optional.of(JsonNodeFactory.instance.objectNode().put("slept_ms", payload.ms()));
    }

    private static Optional<JsonNode> fail(JobContext ctx) {
        FailPayload payload = ctx.payloadAs(FailPayload.class);
        if (ctx.attempt() <= payload.times()) {
            String message = payload.message() != null ? payload.message()
                    : "planned failure " + ctx.attempt() + " of " + payload.times();
            if (payload.permanent()) throw new PermanentJobFailure(message);
            throw new IllegalStateException(message);
        }
        return Optional.of(JsonNodeFactory.instance.objectNode().put("succeeded_on_attempt", ctx.attempt()));
    }
}
