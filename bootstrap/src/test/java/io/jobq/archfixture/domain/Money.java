package io.jobq.archfixture.domain;

import java.math.BigDecimal;

/** Innocent: a domain value that uses the JDK only, as the domain rule allows. */
public record Money(BigDecimal amount, String currency) {}
