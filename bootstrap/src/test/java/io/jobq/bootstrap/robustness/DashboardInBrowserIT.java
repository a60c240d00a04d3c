package io.jobq.bootstrap.robustness;

import static org.assertj.core.api.Assertions.assertThat;

import io.jobq.postgres.testing.PostgresDatabaseExtension;
import io.jobq.postgres.testing.TestDatabase;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.NoSuchElementException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real browser: headless Chromium (Debian's {@code chromium} and {@code chromium-driver},
 * which {@code .ci/run} installs; this test fails, never skips, without them) against a real {@code jobq all}
 * with an admin key. It logs in through the form, watches enqueued jobs reach done on the job list, retries a
 * dead job from the dead letters, and saves a screenshot of the overview as {@code target/dashboard.png}.
 */
@ExtendWith(PostgresDatabaseExtension.class)
class DashboardInBrowserIT {
    static final String KEY = "it-admin-key-0123456789-abcdefghijkl";
    static final Path SCREENSHOT = Path.of("target", "dashboard.png");
    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void jobsAreWatchedToDoneAndADeadJobIsRetriedFromThePage(TestDatabase db) throws Exception {
        int port = JobqProcess.freePort();
        try (JobqProcess all = JobqProcess.builder(getClass(), "all", db.jdbcUrl()).env("JOBQ_ADMIN_KEY", KEY)
                .args("all", "--port", Integer.toString(port)).start()) {
            Http http = new Http(port);
            http.awaitHealthy(all, ShortSettings.START_UP);
            WebDriver browser = chromium();
            try {
                String base = "http://127.0.0.1:" + port;
                browser.get(base + "/ui");
                assertThat(browser.getCurrentUrl()).as("sent to log in").endsWith("/ui/login");
                browser.findElement(By.id("key")).sendKeys(KEY);
                browser.findElement(By.cssSelector("form.login button")).click();
                // a click that submits a form can return before the next page replaces this one: every read after
                // one waits for the new page's text rather than reading the old page's element (stale)
                awaitText(browser, By.tagName("h1"), "Overview"::equals);

                for (int i = 0; i < 5; i++) {
                    assertThat(http.post("/jobs", "{\"task\": \"word_count\", \"tenant\": \"acme\", \"payload\": {\"text\": \"job " + i + "\"}}", KEY)
                            .status()).isEqualTo(201);
                }
                long dead = http.post("/jobs", "{\"task\": \"fail\", \"tenant\": \"globex\", \"max_attempts\": 1}", KEY).body().get("id").asLong();

                browser.get(base + "/ui/jobs?tenant=acme");
                awaitOnReload(browser, () -> statuses(browser).size() == 5 && statuses(browser).stream().allMatch("done"::equals));

                browser.findElement(By.linkText("Dead letters")).click();
                // before the reloading wait below, or its refresh could reload the old page and cancel the navigation
                new WebDriverWait(browser, WAIT).until(b -> b.getCurrentUrl().endsWith("/ui/jobs?status=dead"));
                awaitOnReload(browser, () -> !browser.findElements(By.cssSelector("tr[data-id='" + dead + "']")).isEmpty());
                browser.findElement(By.cssSelector("tr[data-id='" + dead + "'] form[action$='/retry'] button")).click();
                // The click submits a form; on a loaded machine chromedriver can return before the POST's
                // redirect lands (a CI run read the list's URL still), so wait for it.
                new WebDriverWait(browser, WAIT).until(b -> b.getCurrentUrl().endsWith("/ui/jobs/" + dead + "?done=retried"));
                awaitText(browser, By.cssSelector(".message"), t -> t.contains("moved back to queued"));
                // the fail task succeeds on its second attempt; the page reloads itself while the job is live
                awaitText(browser, By.id("status"), "done"::equals);
                assertThat(http.get("/jobs/" + dead, KEY).body().get("attempts").asInt()).isEqualTo(2);

                browser.findElement(By.linkText("Overview")).click();
                awaitText(browser, By.cssSelector("#queues tbody"), t -> t.contains("default"));
                assertThat(browser.findElements(By.cssSelector("svg.chart rect"))).as("bars of finished jobs").isNotEmpty();
                Files.createDirectories(SCREENSHOT.getParent());
                File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
                Files.copy(shot.toPath(), SCREENSHOT, StandardCopyOption.REPLACE_EXISTING);
                assertThat(Files.size(SCREENSHOT)).isGreaterThan(10_000);
            } finally {
                browser.quit();
            }
        }
    }

    private static List<String> statuses(WebDriver browser) {
        return browser.findElements(By.cssSelector("#jobs td.status")).stream().map(WebElement::getText).toList();
    }

    /**
     * Waits at most {@link #WAIT} until the element {@code by} exists and its text satisfies {@code expected}. An
     * element missing, or replaced between finding it and reading it (the page navigating or reloading itself),
     * means look again, not fail.
     */
    private static void awaitText(WebDriver browser, By by, java.util.function.Predicate<String> expected) {
        new WebDriverWait(browser, WAIT).ignoring(StaleElementReferenceException.class).ignoring(NoSuchElementException.class)
                .withMessage(() -> "text of " + by + " on " + browser.getCurrentUrl())
                .until(b -> expected.test(b.findElement(by).getText()));
    }

    /** Reloads the page (as a user would) until {@code condition} holds, for at most {@link #WAIT}. */
    private static void awaitOnReload(WebDriver browser, java.util.function.BooleanSupplier condition) {
        new WebDriverWait(browser, WAIT, Duration.ofMillis(500)).ignoring(StaleElementReferenceException.class).until(b -> {
            if (condition.getAsBoolean()) return true;
            b.navigate().refresh();
            return false;
        });
    }

    /** Headless Chromium through the system's chromedriver: nothing is downloaded (Selenium Manager is not used). */
    static WebDriver chromium() {
        File driver = firstExisting("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver");
        File binary = firstExisting("/usr/bin/chromium", "/usr/lib/chromium/chromium");
        ChromeOptions options = new ChromeOptions().setBinary(binary)
                .addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver).build();
        return new ChromeDriver(service, options);
    }

    private static File firstExisting(String... paths) {
        for (String p : paths) {
            if (new File(p).canExecute()) return new File(p);
        }
        throw new IllegalStateException("none of " + List.of(paths) + " exists: install Debian's chromium and chromium-driver "
                + "(apt-get install -y chromium chromium-driver; .ci/run does)");
    }
}
