package io.jobq.domain.fairness;

import java.util.Objects;

/**
 * Start-time fair queuing (SFQ; Goyal, Vin and Cheng, "Start-time Fair Queueing: A Scheduling
 * Algorithm for Integrated Services Packet Switching Networks", SIGCOMM 1996), applied to jobs.
 *
 * <p>When a job becomes runnable it gets the start tag
 * {@code S = max(V, L) + 1 / weight}, where {@code V} is the queue's virtual time (the smallest
 * tag still queued; when nothing is queued, the largest tag handed out so far) and {@code L} the
 * tenant's last tag. Workers always take the lowest tag. Consequences: a flooding tenant's jobs
 * get tags 1, 2, 3, …; a tenant that arrives later starts at {@code V} and interleaves with the
 * flood instead of waiting behind it; an idle tenant banks no credit, because it restarts from
 * {@code V}, not from its old {@code L}; a tenant's own jobs keep their order, because {@code S > L}.
 *
 * <p>Precision: tags are IEEE-754 doubles (PostgreSQL {@code double precision}). A tag stays
 * strictly above the tenant's last one while {@code 1/weight} exceeds the spacing of doubles near
 * the tag, i.e. while {@code tag < 2^52 · (1/weight)}. At weight 1,000 (step 0.001) that is any tag
 * below 4.5·10^12; a test checks 10 million consecutive jobs at weights from 0.001 to 1,000 stay
 * strictly increasing. Should a tag ever stop increasing, {@link #startTag} throws rather than
 * silently reorder a tenant's jobs.
 */
public final class FairQueue {
    private FairQueue() {}

    /**
     * The start tag of a tenant's next job.
     *
     * @param queueVirtualTime V: the lowest tag queued in the queue, or the highest handed out if none is queued; finite
     * @param tenantLastTag L: the tenant's last tag in this queue (0 for a new tenant); finite
     * @param weight the tenant's weight
     * @return {@code max(V, L) + 1/weight}, strictly greater than {@code tenantLastTag}
     * @throws IllegalArgumentException if a tag is NaN or infinite
     * @throws ArithmeticException if the result is not above {@code max(V, L)}: tags outgrew double precision
     */
    public static double startTag(double queueVirtualTime, double tenantLastTag, TenantWeight weight) {
        Objects.requireNonNull(weight, "weight");
        requireFinite("queue virtual time", queueVirtualTime);
        requireFinite("tenant last tag", tenantLastTag);
        double from = Math.max(queueVirtualTime, tenantLastTag);
        double tag = from + weight.step();
        if (!(tag > from) || Double.isInfinite(tag)) {
            throw new ArithmeticException("virtual time " + from + " is too large to advance by 1/" + weight.value()
                    + " in double precision");
        }
        return tag;
    }

    private static void requireFinite(String what, double value) {
        if (!Double.isFinite(value)) throw new IllegalArgumentException(what + " must be finite, was " + value);
    }
}
