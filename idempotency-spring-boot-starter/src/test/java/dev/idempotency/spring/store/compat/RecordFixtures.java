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

package dev.idempotency.spring.store.compat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The golden records of the stores' compatibility tests
 * ({@code RedisRecordCompatibilityIT}, {@code JdbcRecordCompatibilityIT}): a few logical
 * records, defined here once, and the fixture directories under {@value #RESOURCE_ROOT}
 * that hold them as a release stored them (exact Redis values, PostgreSQL column values).
 * <p>
 * The current version must read the records of every fixture directory, and must write
 * exactly the records of {@link #WRITTEN_VERSION}. Any change of a stored format fails
 * the latter: see {@code docs/upgrading.md}. Running the tests with
 * {@code -D}{@value #WRITE_PROPERTY}{@code =true} rewrites the directory of
 * {@link #WRITTEN_VERSION} in the source tree from what the current stores write, instead
 * of comparing.
 *
 * @author Idempotency contributors
 */
public final class RecordFixtures {

	/**
	 * System property that makes the tests rewrite the fixtures of
	 * {@link #WRITTEN_VERSION} instead of comparing with them.
	 */
	public static final String WRITE_PROPERTY = "idempotency.compat.write-fixtures";

	/**
	 * The fixture directory whose records the current version writes.
	 */
	public static final String WRITTEN_VERSION = "0.1.0";

	/**
	 * What a failed comparison tells the developer.
	 */
	public static final String FORMAT_CHANGED = "The stored record format changed. A format change ships in two "
			+ "releases (see docs/upgrading.md): add a new fixture directory, keep the old one readable";

	/**
	 * Class path location of the fixture directories, one per version.
	 */
	public static final String RESOURCE_ROOT = "dev/idempotency/spring/store/compat";

	/**
	 * Lease of every claim.
	 */
	public static final Duration LEASE = Duration.ofSeconds(30);

	/**
	 * TTL of every claim and completion.
	 */
	public static final Duration TTL = Duration.ofHours(24);

	/**
	 * When the records were claimed, by the store's clock.
	 */
	public static final Instant CLAIMED_AT = Instant.parse("2026-01-01T00:00:00Z");

	/**
	 * When the completed records were completed, by the store's clock.
	 */
	public static final Instant COMPLETED_AT = CLAIMED_AT.plusSeconds(1);

	/**
	 * Fingerprint of every record.
	 */
	public static final RequestFingerprint FINGERPRINT = RequestFingerprint
		.fromHex("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");

	/**
	 * Owner of every record.
	 */
	public static final OwnerToken OWNER = new OwnerToken(0x0123456789abcdefL, 0xfedcba9876543210L);

	private static final Path SOURCE_ROOT = Path.of("src", "test", "resources").resolve(RESOURCE_ROOT);

	private RecordFixtures() {
	}

	/**
	 * Return the versions that have a fixture directory, oldest first.
	 * @return the directory names
	 */
	public static List<String> versions() {
		URL root = RecordFixtures.class.getClassLoader().getResource(RESOURCE_ROOT);
		assertThat(root).as("fixture directory %s on the class path", RESOURCE_ROOT).isNotNull();
		try (Stream<Path> directories = Files.list(Path.of(root.toURI()))) {
			return directories.filter(Files::isDirectory)
				.map((path) -> path.getFileName().toString())
				.sorted()
				.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Return whether the tests rewrite the fixtures instead of comparing.
	 * @return {@code true} if {@value #WRITE_PROPERTY} is {@code true}
	 */
	public static boolean writing() {
		return Boolean.getBoolean(WRITE_PROPERTY);
	}

	/**
	 * Read a fixture file from the class path.
	 * @param version the fixture directory
	 * @param file the file's path in it
	 * @return its text
	 */
	public static String read(String version, String file) {
		String resource = RESOURCE_ROOT + "/" + version + "/" + file;
		try (InputStream in = RecordFixtures.class.getClassLoader().getResourceAsStream(resource)) {
			assertThat(in).as("fixture %s", resource).isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Write a fixture file of {@link #WRITTEN_VERSION} into the source tree (the working
	 * directory of the tests is the module's).
	 * @param file the file's path in the fixture directory
	 * @param text its text
	 */
	public static void write(String file, String text) {
		Path path = SOURCE_ROOT.resolve(WRITTEN_VERSION).resolve(file);
		try {
			Files.createDirectories(path.getParent());
			Files.writeString(path, text, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Parse the bytes of a hex fixture: hex digits, with white space and comments from
	 * {@code #} to the end of the line ignored.
	 * @param text the fixture's text
	 * @return the bytes
	 */
	public static byte[] parseHex(String text) {
		StringBuilder hex = new StringBuilder();
		for (String line : text.split("\n", -1)) {
			int comment = line.indexOf('#');
			hex.append((comment >= 0) ? line.substring(0, comment) : line);
		}
		return HexFormat.of().parseHex(hex.toString().replaceAll("\\s", ""));
	}

	/**
	 * Format bytes as one line of a hex fixture, followed by their printable ASCII form
	 * as a comment.
	 * @param bytes the bytes
	 * @param what what they are, or {@code null}
	 * @return the line, with its line break
	 */
	public static String hexLine(byte[] bytes, @Nullable String what) {
		StringBuilder ascii = new StringBuilder();
		for (byte b : bytes) {
			ascii.append((b >= 0x20 && b < 0x7f) ? (char) b : '.');
		}
		return HexFormat.of().formatHex(bytes) + "  # " + ((what != null) ? what + ": " : "") + ascii + "\n";
	}

	/**
	 * The logical records of the fixtures: each one's key, and the response of a
	 * completed one.
	 */
	/**
	 * Return when the completed fixtures expire.
	 * @return the expiry of a completed record
	 */
	public static Instant completedExpiry() {
		return COMPLETED_AT.plus(TTL);
	}

	/**
	 * Return the fixtures of completed records.
	 * @return the completed records
	 */
	public static List<Record> completed() {
		return Arrays.stream(Record.values()).filter(Record::completed).toList();
	}

	/**
	 * Return a fingerprint other than the fixtures'.
	 * @return a fingerprint one bit away from {@link #FINGERPRINT}
	 */
	public static RequestFingerprint otherFingerprint() {
		byte[] bytes = FINGERPRINT.toByteArray();
		bytes[0] ^= 1;
		return RequestFingerprint.of(bytes);
	}

	/**
	 * Assert that a store answered a fixture's response exactly: status, headers in order
	 * and body bytes.
	 * @param actual what the store answered
	 * @param record the fixture
	 */
	public static void assertSameResponse(@Nullable StoredResponse actual, Record record) {
		StoredResponse expected = record.response();
		assertThat(actual).as(record.fileName()).isNotNull();
		assertThat(actual.status()).as(record.fileName()).isEqualTo(expected.status());
		assertThat(actual.headers()).as(record.fileName()).containsExactlyElementsOf(expected.headers());
		assertThat(actual.isBodyRetained()).as(record.fileName()).isEqualTo(expected.isBodyRetained());
		assertThat(actual.bodyBytes()).as(record.fileName()).isEqualTo(expected.bodyBytes());
		assertThat(actual).isEqualTo(expected);
	}

	public enum Record {

		/**
		 * A claim whose request is in flight.
		 */
		PROCESSING("processing", null),

		/**
		 * A completed record with a JSON body and one header.
		 */
		COMPLETED_WITH_BODY("completed-with-body",
				new StoredResponse(201, List.of(new HttpHeader("Content-Type", "application/json")),
						"{\"id\":7,\"amount\":\"12.50\"}".getBytes(StandardCharsets.UTF_8))),

		/**
		 * A completed record whose body was too large to keep.
		 */
		COMPLETED_WITHOUT_BODY("completed-without-body",
				StoredResponse.withoutBody(201, List.of(new HttpHeader("Location", "/payments/8")))),

		/**
		 * A completed record with repeated and non-ASCII headers and a binary body.
		 */
		COMPLETED_WITH_HEADERS("completed-with-headers",
				new StoredResponse(200,
						List.of(new HttpHeader("Content-Type", "application/octet-stream"),
								new HttpHeader("Set-Cookie", "a=1"), new HttpHeader("Set-Cookie", "b=2"),
								new HttpHeader("X-Note", "caf\u00e9 \u2713"), new HttpHeader("X-Empty", "")),
						new byte[] { 0, 1, (byte) 0x7f, (byte) 0x80, (byte) 0xff, '\n' }));

		private final String fileName;

		private final @Nullable StoredResponse response;

		Record(String fileName, @Nullable StoredResponse response) {
			this.fileName = fileName;
			this.response = response;
		}

		/**
		 * Return the name of the record's fixture files, without extension.
		 * @return the name
		 */
		public String fileName() {
			return this.fileName;
		}

		/**
		 * Return the record's idempotency key.
		 * @return the key, in a principal's scope
		 */
		public IdempotencyKey key() {
			return new IdempotencyKey("principal:alice", "compat-" + this.fileName);
		}

		/**
		 * Return the response of a completed record.
		 * @return the response, or {@code null} for {@link #PROCESSING}
		 */
		public @Nullable StoredResponse response() {
			return this.response;
		}

		/**
		 * Return whether the record is completed.
		 * @return {@code true} unless {@link #PROCESSING}
		 */
		public boolean completed() {
			return this.response != null;
		}

	}

}
