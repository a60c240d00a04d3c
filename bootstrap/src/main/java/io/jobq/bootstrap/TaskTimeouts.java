package io.jobq.bootstrap;

import io.jobq.application.config.ConfigValue;
import io.jobq.application.worker.WorkerSettings;
import io.jobq.domain.job.TaskName;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The value of {@code JOBQ_TASK_TIMEOUT} / {@code --task-timeout}: how long a run of each task may take
 * before the worker times it out (its handler is interrupted and the job fails retryably).
 *
 * <p>Text form: comma-separated {@code task=duration} entries, plus optionally {@code default=duration}
 * or {@code default=none} for every task not listed; durations as everywhere in the launcher
 * ({@code 5s}, {@code 15m}, {@code 2h}, {@code PT30S}), positive. Without a {@code default} entry the
 * default stays the worker's ({@link WorkerSettings#DEFAULT_TASK_TIMEOUT}, 15 min), so {@code sleep=5s} bounds
 * {@code sleep} to 5 s and everything else to 15 min. {@code none} is accepted for the default only;
 * a task that may run for hours gets a long entry of its own ({@code export=8h}). {@code default} is
 * reserved here: a task named so gets its own timeout only through the Java API.
 *
 * @param perTask each listed task's timeout, in the order given
 * @param fallback the timeout of unlisted tasks; empty: none
 */
record TaskTimeouts(Map<TaskName, Duration> perTask, Optional<Duration> fallback) {
    private static final String DEFAULT_KEY = "default";

    TaskTimeouts {
        perTask = Collections.unmodifiableMap(new LinkedHashMap<>(perTask));
    }

    /** No task of its own, and the worker's default for the rest: {@code default=15m}. */
    static final TaskTimeouts DEFAULT = new TaskTimeouts(Map.of(), WorkerSettings.DEFAULTS.defaultTaskTimeout());

    /**
     * Parses the text form.
     *
     * @throws IllegalArgumentException naming the first bad entry and what was expected
     */
    static TaskTimeouts parse(String text) {
        Map<TaskName, Duration> perTask = new LinkedHashMap<>();
        Optional<Duration> fallback = DEFAULT.fallback;
        boolean fallbackGiven = false;
        for (String raw : text.split(",")) {
            String entry = raw.strip();
            if (entry.isEmpty()) continue;
            int eq = entry.indexOf('=');
            if (eq < 0) throw bad(entry, "expected task=duration or default=duration");
            String key = entry.substring(0, eq).strip();
            String value = entry.substring(eq + 1).strip();
            if (key.equals(DEFAULT_KEY)) {
                if (fallbackGiven) throw bad(entry, "default is given twice");
                fallbackGiven = true;
                fallback = value.toLowerCase(Locale.ROOT).equals("none") ? Optional.empty() : Optional.of(positive(entry, value));
                continue;
            }
            TaskName task;
            try {
                task = TaskName.of(key);
            } catch (IllegalArgumentException e) {
                throw bad(entry, e.getMessage());
            }
            if (value.toLowerCase(Locale.ROOT).equals("none")) {
                throw bad(entry, "none is accepted for default only; give the task a long timeout instead (e.g. 8h)");
            }
            if (perTask.put(task, positive(entry, value)) != null) throw bad(entry, "task " + task + " is given twice");
        }
        return new TaskTimeouts(perTask, fallback);
    }

    private static Duration positive(String entry, String value) {
        Duration d;
        try {
            d = ConfigValue.duration(value);
        } catch (IllegalArgumentException e) {
            throw bad(entry, e.getMessage());
        }
        if (!d.isPositive()) throw bad(entry, "the timeout must be positive");
        return d;
    }

    private static IllegalArgumentException bad(String entry, String why) {
        return new IllegalArgumentException("entry \"" + entry + "\": " + why);
    }

    /** Gives {@code settings} these timeouts: the listed tasks' and the default. */
    WorkerSettings.Builder applyTo(WorkerSettings.Builder settings) {
        return settings.taskTimeouts(perTask).defaultTaskTimeout(fallback);
    }

    /** The text form, for the start-up log: {@code sleep=5s,default=15m}. */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        perTask.forEach((task, d) -> out.append(task).append('=').append(ConfigValue.text(d)).append(','));
        return out.append(DEFAULT_KEY).append('=').append(fallback.map(ConfigValue::text).orElse("none")).toString();
    }
}
