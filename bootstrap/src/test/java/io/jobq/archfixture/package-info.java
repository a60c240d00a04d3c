/**
 * Deliberately broken architecture, in test sources only: each class here either breaks exactly
 * one of {@link io.jobq.bootstrap.ArchitectureRules} (named "…Violating…" in its doc comment) or is
 * an innocent bystander that the rules must NOT report. The sub-packages mirror jobq's modules
 * under the root {@code io.jobq.archfixture}. Production imports exclude test classes, so none of
 * this is ever checked as jobq's own code.
 */
package io.jobq.archfixture;
