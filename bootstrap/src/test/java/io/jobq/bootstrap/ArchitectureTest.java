package io.jobq.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import io.jobq.application.port.JobStore;
import io.jobq.domain.job.JobState;
import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class ArchitectureTest {

    private static final String ROOT = "io.jobq";
    private static final String FIXTURE_ROOT = "io.jobq.archfixture";

    /**
     * jobq's production classes: every {@code io.jobq} class on this module's test classpath —
     * the domain, application and adapter modules' jars or {@code target/classes}, and bootstrap's
     * own — without any test classes (so neither the fixture below nor the modules' test-jars).
     * The bench module cannot be on this classpath (it depends on bootstrap); the rules only ever
     * exempt it, and Maven's module graph already stops anything here from depending on it.
     * Imported once: the import is the slow part.
     */
    private static final JavaClasses PRODUCTION = new ClassFileImporter()
            .withImportOption(new ImportOption.DoNotIncludeTests())
            .withImportOption(ArchitectureTest::notInATestJar)
            .importPackages(ROOT);

    /**
     * The modules' test-jars (the shared test fixtures: {@code Await}, {@code TestDatabase}, …) are on this
     * classpath as jars, which {@link ImportOption.DoNotIncludeTests} only recognises as directories.
     */
    private static boolean notInATestJar(com.tngtech.archunit.core.importer.Location location) {
        return !location.contains("-tests.jar");
    }

    /** The deliberately violating classes of {@code io.jobq.archfixture}, which live in test sources. */
    private static final JavaClasses FIXTURE = new ClassFileImporter().importPackages(FIXTURE_ROOT);

    private static List<JavaClass> productionClassesIn(String modulePackage) {
        return PRODUCTION.stream()
                .filter(c -> c.getPackageName().equals(modulePackage) || c.getPackageName().startsWith(modulePackage + "."))
                .toList();
    }

    /**
     * Guards against the rules passing vacuously: if the import missed a module, "no class
     * depends on X" would hold trivially.
     */
    @Nested
    class Imports {

        @Test
        void domainAndApplicationClassesAreImported() {
            assertThat(productionClassesIn(ROOT + ".domain")).isNotEmpty();
            assertThat(productionClassesIn(ROOT + ".application")).isNotEmpty();
            assertThat(PRODUCTION.contain(JobState.class)).isTrue();
            assertThat(PRODUCTION.contain(JobStore.class)).isTrue();
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"domain", "application", "postgres", "http", "bootstrap"})
        void modulePackageFoundOnTheClasspathIsImported(String module) throws IOException {
            // Wherever a module's package is on the classpath (its jar or target/classes), the import
            // must have picked its classes up, or every rule about that module would hold vacuously.
            String modulePackage = ROOT + "." + module;
            List<URL> productionLocations = Collections.list(
                            getClass().getClassLoader().getResources(modulePackage.replace('.', '/')))
                    .stream()
                    .filter(url -> !url.toString().contains("/test-classes/"))
                    .toList();
            if (!productionLocations.isEmpty()) {
                assertThat(productionClassesIn(modulePackage)).as("classes imported from %s", productionLocations)
                        .isNotEmpty();
            }
        }

        @Test
        void noTestClassIsImportedAsProduction() {
            assertThat(PRODUCTION.stream().map(JavaClass::getName))
                    .isNotEmpty()
                    .noneMatch(name -> name.startsWith(FIXTURE_ROOT + "."))
                    .noneMatch(name -> name.endsWith("Test") || name.contains("Test$"));
        }

        @Test
        void fixtureIsImportedFromTheTestSources() {
            assertThat(FIXTURE.stream().map(JavaClass::getSimpleName)).contains(
                    "LoggingDomainObject", "JooqUsingUseCase", "JdbcUsingUseCase", "PostgresStoreCallingHttp",
                    "HttpRoutesCallingPostgres", "ClientUsingPostgres", "Wiring");
        }
    }

    @Nested
    class ProductionCode {

        @ParameterizedTest(name = "{0}")
        @EnumSource(ArchitectureRules.class)
        void followsTheRule(ArchitectureRules rule) {
            rule.forRoot(ROOT).check(PRODUCTION);
        }
    }

    /**
     * Each rule, defined once in {@link ArchitectureRules}, checked against the fixture: it must
     * report its own violating class and must not report the innocent ones.
     */
    @Nested
    class EveryRuleCanFail {

        private record Expectation(List<String> culprits, List<String> innocents) {}

        private static final Map<ArchitectureRules, Expectation> EXPECTED = Map.of(
                ArchitectureRules.DOMAIN_DEPENDS_ONLY_ON_THE_JDK,
                new Expectation(List.of("domain.LoggingDomainObject"), List.of("domain.Money")),
                ArchitectureRules.APPLICATION_DEPENDS_ONLY_ON_THE_DOMAIN_LOGGING_AND_JSON,
                new Expectation(List.of("application.JooqUsingUseCase"), List.of("application.AllowedApplicationService")),
                ArchitectureRules.DOMAIN_AND_APPLICATION_DO_NOT_USE_JDBC,
                new Expectation(List.of("application.JdbcUsingUseCase"),
                        List.of("application.AllowedApplicationService", "domain.Money")),
                ArchitectureRules.ADAPTERS_DO_NOT_DEPEND_ON_EACH_OTHER,
                new Expectation(List.of("postgres.PostgresStoreCallingHttp", "http.HttpRoutesCallingPostgres"),
                        List.of("bootstrap.Wiring", "client.ClientUsingPostgres")),
                ArchitectureRules.ONLY_BOOTSTRAP_AND_BENCH_KNOW_THE_ADAPTERS,
                new Expectation(List.of("client.ClientUsingPostgres"),
                        List.of("bootstrap.Wiring", "http.HttpRoutesCallingPostgres", "postgres.PostgresStoreCallingHttp")),
                ArchitectureRules.MODULES_ARE_FREE_OF_CYCLES,
                new Expectation(List.of("postgres.PostgresStoreCallingHttp", "http.HttpRoutesCallingPostgres"),
                        List.of("bootstrap.Wiring", "client.ClientUsingPostgres")));

        @Test
        void everyRuleHasAnExpectation() {
            assertThat(EXPECTED).containsOnlyKeys(ArchitectureRules.values());
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(ArchitectureRules.class)
        void ruleReportsItsViolationInTheFixture(ArchitectureRules rule) {
            EvaluationResult result = rule.forRoot(FIXTURE_ROOT).evaluate(FIXTURE);
            String report = String.join("\n", result.getFailureReport().getDetails());

            assertThat(result.hasViolation()).as(rule.name()).isTrue();
            for (String culprit : EXPECTED.get(rule).culprits()) {
                assertThat(report).as("%s reports %s", rule, culprit).contains(FIXTURE_ROOT + "." + culprit);
            }
            for (String innocent : EXPECTED.get(rule).innocents()) {
                assertThat(report).as("%s does not report %s", rule, innocent)
                        .doesNotContain(FIXTURE_ROOT + "." + innocent);
            }
        }
    }
}
