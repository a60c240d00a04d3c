package io.jobq.application.worker;

import io.jobq.domain.job.TaskName;
import java.util.Map;

/**
 * The {@link java.util.ServiceLoader} service through which a jar contributes handlers without code
 * in the launcher: list the implementing class (public, with a public no-argument constructor) in
 * {@code META-INF/services/io.jobq.application.worker.JobHandlerProvider}, and
 * {@link HandlerRegistry#registerDiscovered(ClassLoader)} registers every handler it returns.
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

    /** The handlers to register, by task name; called once per discovery. */
    Map<TaskName, JobHandler> handlers();
}
