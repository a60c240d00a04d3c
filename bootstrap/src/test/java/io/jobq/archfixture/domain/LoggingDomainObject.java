package io.jobq.archfixture.domain;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Violating DOMAIN_DEPENDS_ONLY_ON_THE_JDK: a domain class that logs through SLF4J. */
public final class LoggingDomainObject {
    private static final Logger LOG = LoggerFactory.getLogger(LoggingDomainObject.class);

    public void touch() {
        LOG.info("the domain must not log");
    }
}
