package io.jobq.application.worker;

import io.jobq.domain.job.TaskName;
import java.util.Map;

/**
 * Makes a set of handlers from their configuration: the {@link java.util.ServiceLoader} service through
 * which a jar contributes handlers without code in the launcher. List the implementing class (public,
 * with a public no-argument constructor) in
 * {@code META-INF/services/io.jobq.application.worker.JobHandlerProvider}, and
 * {@link HandlerRegistry#registerDiscovered(ClassLoader, HandlerSettings)} registers every handler it
 * returns; {@code jobq worker} passes the {@code JOBQ_HANDLER_*} environment variables and system
 * properties ({@link HandlerSettings#fromEnvironment}).
 *
 * <p>An application that embeds the worker needs no provider: it constructs its handlers with its own
 * objects (a mailer, a repository) and {@linkplain HandlerRegistry#register(String, JobHandler) registers}
 * them. It can also register a provider it ships as a plug-in too, with
 * {@link HandlerRegistry#register(JobHandlerProvider, HandlerSettings)}.
 *
 * <p>One provider may contribute several tasks. Two providers (or a provider and code) registering
 * the same task name is a configuration error, reported when the registry is built rather than
 * letting load order decide silently.
 *
 * <p>The built-in handlers ({@link BuiltInHandlers}) are registered in code by
 * {@link HandlerRegistry#withBuiltIns()}, not through this service, so a shaded jar that drops
 * service files still has them.
 */
public interface JobHandlerProvider {

    /**
     * The handlers to register, by task name; called once per registration, before the worker starts.
     *
     * @param settings the handlers' configuration; read it here so that a bad value stops the worker
     *     from starting rather than failing every job
     * @throws IllegalArgumentException if a setting is missing or invalid (the message names it)
     */
    Map<TaskName, JobHandler> handlers(HandlerSettings settings);
}
