package io.jobq.application.worker;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;

/** How a handler's throwable is read: what to store as its error, and whether it asks for no retry. */
final class Failures {
    private Failures() {}

    /** {@code Class: message}, with up to three causes, so the stored error names what went wrong. */
    static String describe(Throwable t) {
        StringBuilder out = new StringBuilder();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable c = t; c != null && seen.add(c) && seen.size() <= 4; c = c.getCause()) {
            if (c != t) out.append("; caused by ");
            out.append(c.getClass().getName());
            if (c.getMessage() != null) out.append(": ").append(c.getMessage());
        }
        return out.toString();
    }

    /** The {@link PermanentJobFailure} in {@code t}'s cause chain (e.g. wrapped by a CompletionException), if any. */
    static Optional<PermanentJobFailure> findPermanent(Throwable t) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
            if (c instanceof PermanentJobFailure p) return Optional.of(p);
        }
        return Optional.empty();
    }
}
