package io.jobq.application.worker;

import static io.jobq.application.worker.JobContextTest.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.domain.job.TaskName;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BuiltInHandlersTest {
    final HandlerRegistry registry = HandlerRegistry.withBuiltIns();

    Optional<JsonNode> run(String task, String payload, int attempt) throws Exception {
        return registry.find(TaskName.of(task)).orElseThrow().handle(context(task, payload, attempt));
    }

    @Test
    void theBuiltInsAreRegistered() {
        assertThat(registry.tasks()).extracting(TaskName::value).containsExactly("fail", "noop", "sleep", "word_count");
    }

    @Test
    void wordCountOfHelloJobQueueIsThree() throws Exception {
        assertThat(run("word_count", "{\"text\": \"hello job queue\"}", 1).orElseThrow().toString())
                .isEqualTo("{\"words\":3}");
    }

    @ParameterizedTest(name = "\"{0}\" has {1} words")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "\"\"                    | 0",
            "\"   \"                 | 0",
            "one                     | 1",
            "\"  leading and trailing  \" | 3",
            "\"tabs\tand\nnewlines\" | 3",
            "\"no\u00a0break\u2003em space\" | 4",
            "\"émoji 😀 count\"     | 3",
    })
    void wordsAreSeparatedByAnyWhitespace(String text, int words) {
        assertThat(BuiltInHandlers.countWords(text)).isEqualTo(words);
    }

    @Test
    void wordCountWithoutTextIsAPermanentFailure() {
        assertThatThrownBy(() -> run("word_count", "{}", 1))
                .isInstanceOf(PermanentJobFailure.class).hasMessageContaining("text is required");
    }

    @Test
    void noopReturnsNoResult() throws Exception {
        assertThat(run("noop", "{\"anything\": [1, 2]}", 1)).isEmpty();
    }

    @Test
    void failFailsWhileTheAttemptIsAtMostTimesThenSucceeds() throws Exception {
        String payload = "{\"times\": 2}";
        assertThatThrownBy(() -> run("fail", payload, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessage("planned failure 1 of 2");
        assertThatThrownBy(() -> run("fail", payload, 2)).isInstanceOf(IllegalStateException.class);
        assertThat(run("fail", payload, 3).orElseThrow().toString()).isEqualTo("{\"succeeded_on_attempt\":3}");
    }

    @Test
    void failDefaultsToOneRetryableFailure() throws Exception {
        assertThatThrownBy(() -> run("fail", "{}", 1)).isNotInstanceOf(PermanentJobFailure.class);
        assertThat(run("fail", "{}", 2)).isPresent();
    }

    @Test
    void failCanBePermanentWithAGivenMessage() {
        assertThatThrownBy(() -> run("fail", "{\"permanent\": true, \"message\": \"nope\"}", 1))
                .isInstanceOf(PermanentJobFailure.class).hasMessage("nope");
    }

    @Test
    void sleepSleepsTheGivenMilliseconds() throws Exception {
        long began = System.nanoTime();
        assertThat(run("sleep", "{\"ms\": 120}", 1).orElseThrow().toString()).isEqualTo("{\"slept_ms\":120}");
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isGreaterThanOrEqualTo(Duration.ofMillis(120));
    }

    @Test
    void sleepStopsSoonAfterItsContextIsCancelled() throws Exception {
        assertThat(sleepStoppedBy((ctx, sleeper) -> ctx.cancel("lease lost")))
                .isInstanceOf(InterruptedException.class).hasMessageContaining("lease lost");
    }

    @Test
    void sleepIsInterruptible() throws Exception {
        assertThat(sleepStoppedBy((ctx, sleeper) -> sleeper.interrupt())).isInstanceOf(InterruptedException.class);
    }

    /** Starts a 60 s {@code sleep} on its own thread, applies {@code stop}, checks the thread ends within 5 s, and returns what the handler threw. */
    private Throwable sleepStoppedBy(BiConsumer<JobContext, Thread> stop) throws Exception {
        JobContext ctx = context("sleep", "{\"ms\": 60000}", 1);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread sleeper = Thread.ofVirtual().start(() -> {
            try {
                registry.find(TaskName.of("sleep")).orElseThrow().handle(ctx);
            } catch (Throwable t) {
                thrown.set(t);
            }
        });

        stop.accept(ctx, sleeper);
        sleeper.join(Duration.ofSeconds(5));

        assertThat(sleeper.isAlive()).isFalse();
        return thrown.get();
    }

    @Test
    void sleepRefusesANegativeOrHugeDuration() {
        assertThatThrownBy(() -> run("sleep", "{\"ms\": -1}", 1)).isInstanceOf(PermanentJobFailure.class);
        assertThatThrownBy(() -> run("sleep", "{\"ms\": 86400001}", 1)).isInstanceOf(PermanentJobFailure.class);
    }
}
