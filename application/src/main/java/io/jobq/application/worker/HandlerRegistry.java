package io.jobq.application.worker;

import io.jobq.domain.job.TaskName;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The handlers a worker can run, by task name. Fill it before {@link Worker#start()}: the worker
 * takes a snapshot when it is built, so later registrations do not reach a running worker.
 *
 * <pre>{@code
 * HandlerRegistry handlers = HandlerRegistry.withBuiltIns()
 *         .register("send_email", new SendEmailHandler(mailer))    // your objects, through the constructor
 *         .registerDiscovered(Thread.currentThread().getContextClassLoader(), HandlerSettings.EMPTY);
 * }</pre>
 *
 * A job whose task has no handler on a worker fails retryably (see {@link Worker}), because in a
 * rolling deploy another worker may already know the task.
 *
 * <p>Thread-safe.
 */
public final class HandlerRegistry {
    private static final Comparator<TaskName> BY_NAME = Comparator.comparing(TaskName::value);

    private final Map<TaskName, JobHandler> handlers = new ConcurrentHashMap<>();

    /** An empty registry. */
    public HandlerRegistry() {}

    /** A registry holding the built-in tasks {@code word_count}, {@code noop}, {@code sleep} and {@code fail}. */
    public static HandlerRegistry withBuiltIns() {
        HandlerRegistry registry = new HandlerRegistry();
        return registry.register(new BuiltInHandlers(), HandlerSettings.EMPTY);
    }

    /**
     * Registers {@code handler} for {@code task}.
     *
     * @return this registry, for chaining
     * @throws IllegalArgumentException if the name is not a valid task name, or the task already has a handler
     */
    public HandlerRegistry register(String task, JobHandler handler) {
        return register(TaskName.of(task), handler);
    }

    /**
     * Registers {@code handler} for {@code task}.
     *
     * @return this registry, for chaining
     * @throws IllegalArgumentException if the task already has a handler (two handlers for one task is
     *     a configuration error, not something load order should settle)
     */
    public HandlerRegistry register(TaskName task, JobHandler handler) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(handler, "handler");
        if (handlers.putIfAbsent(task, handler) != null) {
            throw new IllegalArgumentException("task '" + task + "' already has a handler");
        }
        return this;
    }

    /**
     * Registers every handler {@code provider} makes from {@code settings}.
     *
     * @return this registry, for chaining
     * @throws IllegalArgumentException if a task already has a handler, or the provider refuses the settings
     */
    public HandlerRegistry register(JobHandlerProvider provider, HandlerSettings settings) {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(provider, "provider").handlers(settings).forEach(this::register);
        return this;
    }

    /**
     * Registers the handlers of every {@link JobHandlerProvider} that {@link ServiceLoader} finds
     * through {@code loader}, each made from {@code settings}.
     *
     * @return this registry, for chaining
     * @throws IllegalArgumentException if a discovered task already has a handler, or a provider refuses the settings
     * @throws java.util.ServiceConfigurationError if a listed provider cannot be loaded or instantiated
     */
    public HandlerRegistry registerDiscovered(ClassLoader loader, HandlerSettings settings) {
        for (JobHandlerProvider provider : ServiceLoader.load(JobHandlerProvider.class, loader)) {
            register(provider, settings);
        }
        return this;
    }

    /** The handler for {@code task}, if one is registered. */
    public Optional<JobHandler> find(TaskName task) {
        return Optional.ofNullable(handlers.get(task));
    }

    /** The registered task names, sorted. */
    public Set<TaskName> tasks() {
        return handlers.keySet().stream().collect(Collectors.toCollection(() -> new TreeSet<>(BY_NAME)));
    }

    /** An immutable copy of the current registrations, sorted by task name. */
    Map<TaskName, JobHandler> snapshot() {
        Map<TaskName, JobHandler> sorted = new TreeMap<>(BY_NAME);
        sorted.putAll(handlers);
        return Collections.unmodifiableMap(sorted);
    }
}
