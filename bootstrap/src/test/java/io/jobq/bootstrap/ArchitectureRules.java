package io.jobq.bootstrap;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import java.util.function.Function;

/**
 * jobq's dependency rules (architecture.md: "domain ← application ← adapters ← bootstrap; adapters
 * never import each other; only bootstrap and bench know concrete adapters"), each defined ONCE and
 * parameterised by the root package. {@link ArchitectureTest} checks them with root {@code io.jobq}
 * against the production classes, and with root {@code io.jobq.archfixture} against a small set of
 * deliberately violating test classes, to show that every rule can fail.
 */
enum ArchitectureRules {

    DOMAIN_DEPENDS_ONLY_ON_THE_JDK(root -> classes()
            .that().resideInAPackage(root + ".domain..")
            .should().onlyDependOnClassesThat().resideInAnyPackage("java..", root + ".domain..")
            .because("the domain is the pure model every other module builds on: no logging, JSON or database")),

    APPLICATION_DEPENDS_ONLY_ON_THE_DOMAIN_LOGGING_AND_JSON(root -> classes()
            .that().resideInAPackage(root + ".application..")
            .should().onlyDependOnClassesThat().resideInAnyPackage(
                    "java..", root + ".domain..", root + ".application..", "org.slf4j..", "com.fasterxml.jackson..",
                    "com.cronutils..")
            .because("use cases and the worker loop see ports only; SLF4J is the logging facade, Jackson"
                    + " is allowed because the worker's handler contract (JobHandler) exposes a job's payload as"
                    + " a Jackson JsonNode, and cron-utils parses cron schedules (CronSchedule) rather than our own parser")),

    DOMAIN_AND_APPLICATION_DO_NOT_USE_JDBC(root -> noClasses()
            .that().resideInAnyPackage(root + ".domain..", root + ".application..")
            .should().dependOnClassesThat().resideInAnyPackage("java.sql..", "javax.sql..")
            .because("\"java..\" above lets in the JDK, and JDBC is part of it; SQL belongs to the PostgreSQL"
                    + " adapter, behind the JobStore port")),

    ADAPTERS_DO_NOT_DEPEND_ON_EACH_OTHER(root -> CompositeArchRule
            .of(noClasses().that().resideInAPackage(root + ".postgres..")
                    .should().dependOnClassesThat().resideInAPackage(root + ".http.."))
            .and(noClasses().that().resideInAPackage(root + ".http..")
                    .should().dependOnClassesThat().resideInAPackage(root + ".postgres.."))
            .because("the HTTP API reaches the store through the application's ports, so either adapter can"
                    + " be replaced or faked alone")),

    ONLY_BOOTSTRAP_AND_BENCH_KNOW_THE_ADAPTERS(root -> noClasses()
            .that().resideInAPackage(root + "..")
            .and().resideOutsideOfPackages(
                    root + ".bootstrap..", root + ".bench..", root + ".postgres..", root + ".http..")
            .should().dependOnClassesThat().resideInAnyPackage(root + ".postgres..", root + ".http..")
            .because("concrete adapters are chosen and wired in one place; everything else talks to ports")),

    MODULES_ARE_FREE_OF_CYCLES(root -> slices()
            .matching(root + ".(*)..")
            .should().beFreeOfCycles()
            .because("a cycle between top-level packages would make the module order above meaningless"));

    private final Function<String, ArchRule> definition;

    ArchitectureRules(Function<String, ArchRule> definition) {
        this.definition = definition;
    }

    /** This rule for the packages under {@code root}, e.g. {@code io.jobq} → {@code io.jobq.domain..}. */
    ArchRule forRoot(String root) {
        return definition.apply(root);
    }
}
