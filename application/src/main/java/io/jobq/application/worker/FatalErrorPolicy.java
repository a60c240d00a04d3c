package io.jobq.application.worker;

/**
 * What a {@link Worker} does when one of its threads catches an error after which this JVM can no
 * longer be trusted to work ({@link #isFatal}). Every other throwable is handled where it is caught:
 * a handler's fails its run, a store call's is backed off and retried, a listener's is logged.
 *
 * <p>Why not carry on after an {@link OutOfMemoryError}: it is thrown in whichever thread allocated
 * last, not in the one that used the memory, so any thread (the claim loop, a heartbeat, a library's
 * housekeeping) may have died or left a half-updated structure behind; a worker that keeps its
 * process alive in that state may never claim again while looking healthy. Exiting lets the
 * supervisor (systemd, Docker, Kubernetes) start a fresh JVM; jobs in hand are left to their leases,
 * exactly as after a crash.
 */
@FunctionalInterface
public interface FatalErrorPolicy {

    /**
     * Exit status of {@link #HALT}: 3, the status HotSpot's {@code -XX:+ExitOnOutOfMemoryError} uses,
     * so a supervisor sees one status for "the JVM ran out of memory" whichever of the two acts first.
     * Distinct from the launcher's 0 (clean stop), 1 (start-up failure) and 2 (bad configuration).
     */
    int HALT_EXIT_CODE = 3;

    /**
     * Logs the error (best effort: logging may itself need memory that is not there) and
     * {@link Runtime#halt halts} the JVM with {@link #HALT_EXIT_CODE}. It halts rather than exits: an
     * exit would first run shutdown hooks, e.g. a worker's graceful drain of up to its grace period,
     * on a JVM that may have no memory left to run them. The default of {@link Worker.Builder}.
     */
    FatalErrorPolicy HALT = new HaltingFatalErrorPolicy();

    /**
     * Called on the thread that caught {@code error}, possibly by several threads at once. Meant not to
     * return (see {@link #HALT}); if it does, the worker goes on as it would after a non-fatal error.
     * The heap may be full: an implementation should halt before anything that allocates can fail,
     * or catch what it throws (as HALT does around its log line).
     *
     * @param where the part of the worker that caught it, a constant such as {@code "claim loop"},
     *     {@code "handler"} or {@code "store call"} (built without allocating); the calling thread's name
     *     ({@code jobq-claim-<worker>}, {@code jobq-job-<job>#<attempt>}, …) says more
     * @param error a throwable for which {@link #isFatal} is true
     */
    void onFatalError(String where, Throwable error);

    /**
     * Whether {@code t}, or one of its first 16 causes, is a {@link VirtualMachineError} other than
     * {@link StackOverflowError}: {@link OutOfMemoryError} (also "unable to create native thread"),
     * {@link InternalError}, {@link UnknownError}. The causes count because libraries wrap them: the
     * PostgreSQL driver reports an OutOfMemoryError met while reading a result as an SQLException
     * caused by it. A StackOverflowError is not fatal: it belongs to the one thread whose stack
     * overflowed and is gone once that stack unwinds; nor are LinkageErrors (NoClassDefFoundError,
     * ExceptionInInitializerError) or AssertionError, which fail the work that met them. Allocates
     * nothing, so it works when the heap is full.
     */
    static boolean isFatal(Throwable t) {
        Throwable c = t;
        for (int depth = 0; c != null && depth <= 16; depth++) {
            if (c instanceof VirtualMachineError && !(c instanceof StackOverflowError)) return true;
            c = c.getCause();
        }
        return false;
    }
}
