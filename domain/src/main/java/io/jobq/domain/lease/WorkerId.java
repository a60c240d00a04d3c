package io.jobq.domain.lease;

import java.util.Objects;

/**
 * Names a worker process, e.g. {@code host-4711-3f2a}. It is the owner half of a lease; it is
 * NOT unique over time (a restarted process may reuse its name), which is why fencing also
 * compares the attempt number ({@link FencingToken}). 1 to 128 printable ASCII characters.
 */
public record WorkerId(String value) {
    /** Longest accepted id, in characters (the column is {@code varchar(128)}). */
    public static final int MAX_LENGTH = 128;

    /** @throws IllegalArgumentException if empty, too long, or not printable ASCII */
    public WorkerId {
        Objects.requireNonNull(value, "worker id");
        if (value.isEmpty() || value.length() > MAX_LENGTH || !printable(value)) {
            throw new IllegalArgumentException(
                    "worker id must be 1-" + MAX_LENGTH + " printable ASCII characters without spaces");
        }
    }

    // A loop, not a stream: every claimed and every completed row's lease names its worker, and the stream's
    // pipeline showed in a busy worker's profile (issue 14).
    private static boolean printable(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c <= 0x20 || c >= 0x7f) return false;
        }
        return true;
    }

    // Written out: the record's generated equals goes through a method-handle bootstrap that showed in the same
    // profile (fencing compares worker ids on every outcome); the same contract.
    @Override
    public boolean equals(Object o) {
        return o instanceof WorkerId other && value.equals(other.value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    public static WorkerId of(String value) {
        return new WorkerId(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
