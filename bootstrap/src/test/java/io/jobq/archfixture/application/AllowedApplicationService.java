package io.jobq.archfixture.application;

import com.fasterxml.jackson.databind.JsonNode;
import io.jobq.archfixture.domain.Money;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Innocent: an application class using only what the application rule allows (JDK, domain, SLF4J, Jackson). */
public final class AllowedApplicationService {
    private static final Logger LOG = LoggerFactory.getLogger(AllowedApplicationService.class);

    public Money handle(JsonNode payload, Money price) {
        LOG.debug("handling {}", payload);
        return price;
    }
}
