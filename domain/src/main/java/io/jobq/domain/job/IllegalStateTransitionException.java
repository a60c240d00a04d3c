package io.jobq.domain.job;

/** Thrown when code asks for a state change the {@link JobState} table does not allow. */
public final class IllegalStateTransitionException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final JobState from;
    private final JobState to;

    public IllegalStateTransitionException(JobState from, JobState to) {
        super("a job cannot move from " + from.dbName() + " to " + to.dbName()
                + "; allowed from " + from.dbName() + ": "
                + from.successors().stream().map(JobState::dbName).toList());
        this.from = from;
        this.to = to;
    }

    public JobState from() {
        return from;
    }

    public JobState to() {
        return to;
    }
}
