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
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.sql.DataSource;

import dev.idempotency.test.servers.TestServers;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * One instance of the sample running in a child JVM from the packaged jar, so that it can
 * be killed like a real process: {@link #kill()} sends {@code SIGKILL} (what
 * {@link Process#destroyForcibly()} does on Linux), no shutdown hook runs, nothing is
 * flushed or released.
 *
 * @author Idempotency contributors
 */
final class SampleInstance implements AutoCloseable {

	/** Exit status of a process killed by {@code SIGKILL} (128 + 9). */
	static final int SIGKILL_EXIT_STATUS = 137;

	private static final Pattern PORT = Pattern.compile("started on port[s]?:? (\\d+)");

	private static final Pattern STARTED = Pattern.compile("Started \\S+ in ");

	private final String name;

	private final Process process;

	private final Path log;

	private int port;

	private SampleInstance(String name, Process process, Path log) {
		this.name = name;
		this.process = process;
		this.log = log;
	}

	/**
	 * Start an instance; it starts in the background, {@link #awaitStarted(Duration)}
	 * waits for it.
	 * @param name a name for messages and the log file
	 * @param properties Spring Boot properties, passed as command line arguments
	 * @param jvmArguments arguments for the child JVM
	 * @param logDirectory where the instance's output goes ({@code <name>.log})
	 * @return the starting instance
	 */
	static SampleInstance start(String name, Map<String, ?> properties, List<String> jvmArguments, Path logDirectory) {
		Path jar = jar();
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmArguments);
		command.add("-jar");
		command.add(jar.toString());
		properties.forEach((property, value) -> command.add("--" + property + "=" + value));
		try {
			Files.createDirectories(logDirectory);
			Path log = logDirectory.resolve(name + ".log");
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			return new SampleInstance(name, process, log);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + name + ": " + command, ex);
		}
	}

	/**
	 * Create a schema on the test PostgreSQL server and return a data source for it that
	 * opens a connection per use: the server is shared, so no pool keeps idle
	 * connections.
	 * @param schema the schema, a plain lower-case identifier
	 * @return the data source
	 */
	static DataSource schemaDataSource(String schema) {
		if (!schema.matches("[a-z_][a-z0-9_]*")) {
			throw new IllegalArgumentException("Not a plain schema name: " + schema);
		}
		TestServers.Postgres postgres = TestServers.postgres();
		JdbcClient.create(new DriverManagerDataSource(postgres.jdbcUrl(), postgres.username(), postgres.password()))
			.sql("CREATE SCHEMA IF NOT EXISTS " + schema)
			.update();
		String url = postgres.jdbcUrl() + (postgres.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema;
		return new DriverManagerDataSource(url, postgres.username(), postgres.password());
	}

	/**
	 * Return the sample's packaged jar, {@code target/idempotency-sample-payments-*.jar}.
	 * @return the jar
	 * @throws IllegalStateException if it was not built
	 */
	static Path jar() {
		Path target = targetDirectory();
		try (Stream<Path> files = Files.list(target)) {
			return files.filter((file) -> isApplicationJar(file.getFileName().toString()))
				.max(Comparator.comparing((file) -> file.toFile().lastModified()))
				.orElseThrow(() -> new IllegalStateException("No idempotency-sample-payments-*.jar in " + target
						+ ": build it first with ./mvnw -pl idempotency-sample-payments -am -DskipTests package "
						+ "(Failsafe runs after package, so 'verify' builds it too)"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not list " + target, ex);
		}
	}

	private static boolean isApplicationJar(String file) {
		return file.startsWith("idempotency-sample-payments-") && file.endsWith(".jar") && !file.endsWith("-tests.jar")
				&& !file.endsWith("-sources.jar") && !file.endsWith("-javadoc.jar");
	}

	private static Path targetDirectory() {
		try {
			// target/test-classes, where this class was loaded from
			Path classes = Path.of(SampleInstance.class.getProtectionDomain().getCodeSource().getLocation().toURI());
			return classes.getParent();
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Wait until the instance has started and serves HTTP.
	 * @param timeout how long to wait
	 * @return this instance
	 * @throws IllegalStateException if it exited or did not start in time, with its
	 * output
	 */
	SampleInstance awaitStarted(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			String output = output();
			Matcher port = PORT.matcher(output);
			if (port.find() && STARTED.matcher(output).find()) {
				this.port = Integer.parseInt(port.group(1));
				return this;
			}
			if (!this.process.isAlive()) {
				throw new IllegalStateException(this.name + " exited with status " + this.process.exitValue()
						+ " before it started; its output (" + this.log + "):\n" + tail(output));
			}
			sleep(Duration.ofMillis(100));
		}
		throw new IllegalStateException(
				this.name + " did not start within " + timeout + "; its output (" + this.log + "):\n" + tail(output()));
	}

	/**
	 * Kill the instance with {@code SIGKILL} and wait until it is gone.
	 * @return its exit status, {@link #SIGKILL_EXIT_STATUS} when the signal killed it
	 */
	int kill() {
		this.process.destroyForcibly();
		try {
			if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException(this.name + " still runs 30 s after SIGKILL");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		return this.process.exitValue();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	String name() {
		return this.name;
	}

	int port() {
		if (this.port == 0) {
			throw new IllegalStateException(this.name + " has not started");
		}
		return this.port;
	}

	long pid() {
		return this.process.pid();
	}

	/**
	 * Return everything the instance has written so far.
	 * @return its output
	 */
	String output() {
		try {
			return Files.readString(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			return "";
		}
	}

	private static String tail(String output) {
		return (output.length() > 6000) ? output.substring(output.length() - 6000) : output;
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			kill();
		}
	}

	@Override
	public String toString() {
		return this.name + " (pid " + this.process.pid() + ", port " + this.port + ")";
	}

}
