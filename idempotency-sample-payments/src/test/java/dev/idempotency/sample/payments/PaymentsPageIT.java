/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.sample.payments;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.idempotency.test.servers.TestServers;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.FileSystemUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's page in a real browser (headless Chromium driven by chromedriver) against
 * the sample on real Redis and PostgreSQL: the page's double click and network retry pay
 * once, and the page shows the replays.
 * <p>
 * Needs Debian's {@code chromium} and {@code chromium-driver} packages; other locations
 * can be given with {@code -Didempotency.test.chromium=...} and
 * {@code -Didempotency.test.chromedriver=...} (or the {@code IDEMPOTENCY_TEST_CHROMIUM} /
 * {@code IDEMPOTENCY_TEST_CHROMEDRIVER} environment variables). The test never downloads
 * a browser or a driver. It leaves chromedriver's log in
 * {@code target/payments-page-it/}, and on failure a screenshot and the page's HTML.
 *
 * @author Idempotency contributors
 */
// the test uses no DevTools protocol: no warning that none matches this Chromium
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "logging.level.org.openqa.selenium.devtools.CdpVersionFinder=error",
				"logging.level.org.openqa.selenium.chromium.ChromiumDriver=error" })
class PaymentsPageIT {

	private static final String SCHEMA = "payments_page_it_" + Long.toHexString(System.nanoTime());

	private static final String INSTALL = "install them with "
			+ "'apt-get install -y --no-install-recommends chromium chromium-driver' (Debian/Ubuntu)";

	private static final Path OUTPUT = Path.of("target", "payments-page-it");

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final long INITIAL_BALANCE = 10_000;

	private static final long AMOUNT = 3000;

	@LocalServerPort
	private int port;

	@Autowired
	private JdbcClient jdbc;

	private @Nullable ChromeDriver browser;

	private @Nullable Path profile;

	@RegisterExtension
	final TestExecutionExceptionHandler evidenceOnFailure = this::saveEvidence;

	@DynamicPropertySource
	static void servers(DynamicPropertyRegistry registry) {
		TestServers.springProperties().forEach((name, value) -> registry.add(name, () -> value));
		registry.add("spring.datasource.hikari.schema", () -> SCHEMA);
		registry.add("spring.flyway.schemas", () -> SCHEMA);
		registry.add("spring.flyway.default-schema", () -> SCHEMA);
		registry.add("idempotency.redis.key-prefix", () -> SCHEMA + ":");
	}

	@BeforeEach
	void startBrowser(TestInfo test) throws IOException {
		Path chromium = executable("idempotency.test.chromium", "IDEMPOTENCY_TEST_CHROMIUM", "/usr/bin/chromium",
				"Chromium");
		Path chromedriver = executable("idempotency.test.chromedriver", "IDEMPOTENCY_TEST_CHROMEDRIVER",
				"/usr/bin/chromedriver", "chromedriver");
		Files.createDirectories(OUTPUT);
		this.profile = Files.createTempDirectory("payments-page-it-profile");
		ChromeOptions options = new ChromeOptions();
		options.setBinary(chromium.toFile());
		options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
				"--window-size=1280,1024", "--user-data-dir=" + this.profile.toAbsolutePath());
		// an explicit driver and browser:
		// Selenium Manager is never asked to find or download one
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(chromedriver.toFile())
			.usingAnyFreePort()
			.withLogFile(OUTPUT.resolve(test.getTestMethod().orElseThrow().getName() + "-chromedriver.log").toFile())
			.build();
		this.browser = new ChromeDriver(service, options);
		this.browser.get("http://localhost:" + this.port + "/");
	}

	@AfterEach
	void stopBrowser() {
		try {
			if (this.browser != null) {
				this.browser.quit();
			}
		}
		finally {
			this.browser = null;
			deleteProfile();
		}
	}

	@Test
	void aDoubleClickPaysOnceAndTheRetryIsAReplay() {
		String account = openAccount();
		pay(false);
		List<Row> rows = results();
		assertThat(rows).extracting(Row::label).containsExactly("click 1", "click 2", "retry");
		// exactly one click ran; the other waited for it (in-flight-wait 1s) and replays
		// its answer, or, on a very slow machine, was told that it is still running
		Row original = theOneThatRan(rows.subList(0, 2), rows);
		assertThat(original.body()).contains(account);
		assertReplayOf(rows.get(2), original, rows);
		assertPaidOnce(account);
	}

	@Test
	void aNetworkRetryWhileInFlightPaysOnceAndTheLaterRetryIsAReplay() {
		String account = openAccount();
		pay(true);
		List<Row> rows = results();
		assertThat(rows).extracting(Row::label)
			.containsExactly("retry while in flight", "first request", "retry after completion");
		// The story: the gateway takes 4 s and the retry goes out 1 s after the first
		// request, waits the policy's 1 s in-flight-wait and is told 409. The browser
		// and the server decide when each request reaches the claim, and on a busy
		// machine the order can differ (seen under stress-ng with two builds beside the
		// test: the retry got 201). Whatever the order, exactly one of the two ran, the
		// other was told to wait or replays its answer, and the account paid once.
		// (PaymentsApplicationIT waits until the key is in progress before its duplicate,
		// and asserts the 409.)
		Row original = theOneThatRan(rows.subList(0, 2), rows);
		assertThat(original.body()).contains(account);
		assertReplayOf(rows.get(2), original, rows);
		assertPaidOnce(account);
	}

	/**
	 * Of requests that raced on one key: exactly one ran its handler (201, not a replay);
	 * each other one was told it is in progress (409) or replays that one's answer.
	 */
	private static Row theOneThatRan(List<Row> racing, List<Row> all) {
		List<Row> ran = racing.stream().filter((row) -> row.status() == 201 && !row.replayed()).toList();
		assertThat(ran).as("the requests that ran their handler, of %s", all).hasSize(1);
		Row original = ran.get(0);
		for (Row other : racing) {
			if (other != original) {
				if (other.status() == 409) {
					assertThat(other.replayed()).as("%s, of %s", other.label(), all).isFalse();
					assertThat(other.body()).as("%s, of %s", other.label(), all).contains("request-in-progress");
				}
				else {
					assertReplayOf(other, original, all);
				}
			}
		}
		return original;
	}

	private static void assertReplayOf(Row replay, Row original, List<Row> all) {
		assertThat(replay.status()).as("%s, of %s", replay.label(), all).isEqualTo(original.status());
		assertThat(replay.replayed()).as("%s replayed, of %s", replay.label(), all).isTrue();
		assertThat(replay.body()).as("%s, of %s", replay.label(), all).isEqualTo(original.body());
	}

	private String openAccount() {
		ChromeDriver browser = browser();
		browser.findElement(By.id("open-account")).click();
		WebElement balance = new WebDriverWait(browser, TIMEOUT)
			.until(ExpectedConditions.presenceOfElementLocated(By.id("balance-value")));
		new WebDriverWait(browser, TIMEOUT).until(ExpectedConditions.elementToBeClickable(By.id("pay")));
		assertThat(balance.getDomAttribute("data-balance")).isEqualTo(String.valueOf(INITIAL_BALANCE));
		assertThat(balance.getDomAttribute("data-payments")).isEqualTo("0");
		String account = browser.findElement(By.id("account")).getDomAttribute("data-id");
		assertThat(account).isNotNull();
		return UUID.fromString(account).toString();
	}

	private void pay(boolean networkRetry) {
		ChromeDriver browser = browser();
		WebElement checkbox = browser.findElement(By.id("network-retry"));
		if (checkbox.isSelected() != networkRetry) {
			checkbox.click();
		}
		assertThat(checkbox.isSelected()).isEqualTo(networkRetry);
		browser.findElement(By.id("pay")).click();
		// the page clears the results and the balance when a payment starts and shows the
		// balance again after its last request
		new WebDriverWait(browser, TIMEOUT)
			.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#results tr"), 3));
		new WebDriverWait(browser, TIMEOUT).until(ExpectedConditions.presenceOfElementLocated(By.id("balance-value")));
		new WebDriverWait(browser, TIMEOUT).until(ExpectedConditions.elementToBeClickable(By.id("pay")));
	}

	private List<Row> results() {
		return browser().findElements(By.cssSelector("#results tr")).stream().map(Row::of).toList();
	}

	private void assertPaidOnce(String account) {
		WebElement balance = browser().findElement(By.id("balance-value"));
		assertThat(balance.getDomAttribute("data-payments")).isEqualTo("1");
		assertThat(balance.getDomAttribute("data-balance")).isEqualTo(String.valueOf(INITIAL_BALANCE - AMOUNT));
		// and what the database says: one payment, one gateway charge, one debit
		List<String> keys = this.jdbc.sql("SELECT idempotency_key FROM payments WHERE account_id = ?")
			.param(UUID.fromString(account))
			.query(String.class)
			.list();
		assertThat(keys).hasSize(1);
		long charges = this.jdbc.sql("SELECT count(*) FROM gateway_charges WHERE charge_key = ?")
			.param(PaymentService.chargeKey("alice", keys.get(0)))
			.query(Long.class)
			.single();
		assertThat(charges).isEqualTo(1);
		long stored = this.jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
		assertThat(stored).isEqualTo(INITIAL_BALANCE - AMOUNT);
	}

	private ChromeDriver browser() {
		ChromeDriver browser = this.browser;
		assertThat(browser).as("browser").isNotNull();
		return browser;
	}

	private void saveEvidence(ExtensionContext context, Throwable failure) throws Throwable {
		ChromeDriver browser = this.browser;
		if (browser != null) {
			String name = context.getRequiredTestMethod().getName();
			try {
				Files.createDirectories(OUTPUT);
				Files.write(OUTPUT.resolve(name + ".png"), browser.getScreenshotAs(OutputType.BYTES));
				Files.writeString(OUTPUT.resolve(name + ".html"), browser.getPageSource(), StandardCharsets.UTF_8);
			}
			catch (RuntimeException | IOException ex) {
				failure.addSuppressed(ex);
			}
		}
		throw failure;
	}

	private void deleteProfile() {
		Path profile = this.profile;
		this.profile = null;
		if (profile != null) {
			try {
				FileSystemUtils.deleteRecursively(profile);
			}
			catch (IOException ex) {
				// a temporary directory: the system cleans it up eventually
			}
		}
	}

	private static Path executable(String property, String variable, String fallback, String what) {
		String configured = System.getProperty(property);
		if (configured == null || configured.isBlank()) {
			configured = System.getenv(variable);
		}
		Path path = Path.of((configured != null && !configured.isBlank()) ? configured : fallback);
		assertThat(Files.isRegularFile(path) && Files.isExecutable(path))
			.withFailMessage("%s not found at %s: %s, or set -D%s=<path> (or %s)", what, path, INSTALL, property,
					variable)
			.isTrue();
		return path;
	}

	/**
	 * One row of the page's results table.
	 */
	private record Row(String label, int status, boolean replayed, String body) {

		static Row of(WebElement row) {
			List<WebElement> cells = row.findElements(By.tagName("td"));
			String status = row.getDomAttribute("data-status");
			return new Row(cells.get(0).getText(), (status != null) ? Integer.parseInt(status) : -1,
					"true".equals(row.getDomAttribute("data-replayed")), cells.get(3).getText());
		}

	}

}
