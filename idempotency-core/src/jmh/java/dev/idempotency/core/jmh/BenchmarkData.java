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

package dev.idempotency.core.jmh;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.InMemoryIdempotencyStore;

/**
 * Deterministic test data shared by the benchmarks: realistic JSON documents of a given
 * size, typical responses, keys and fingerprints. The same seed always gives the same
 * bytes, so runs on different machines measure the same input.
 *
 * @author Idempotency contributors
 */
final class BenchmarkData {

	static final String JSON = "application/json";

	/**
	 * JSON Pointers of the volatile values that {@link #json(int, long)} documents hold.
	 */
	static final List<String> EXCLUDED_POINTERS = List.of("/meta/clientTimestamp", "/items/0/clientRef");

	private static final String[] WORDS = { "alpha", "Bravo", "charlie", "delta", "écho", "foxtrot", "Größe",
			"hotel", "india", "juliett", "kilo", "Lima", "mike", "Nov\"ember\"", "oscar", "papa\\quebec", "romeo",
			"sierra", "tango", "uniform", "victor", "whiskey", "x-ray", "yankee", "zulu", "日本", "€" };

	private BenchmarkData() {
	}

	/**
	 * Build a JSON document of at least {@code size} bytes (and at most a few hundred
	 * more): an order with a metadata object and an array of line items, where members
	 * are not in sorted order, strings hold escapes and non-ASCII characters, and numbers
	 * are integers, decimals and exponents.
	 * @param size the minimum size in bytes
	 * @param seed the random seed
	 * @return the UTF-8 bytes of the document
	 */
	static byte[] json(int size, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		StringBuilder json = new StringBuilder(size + 512);
		json.append("{\"orderId\": \"ord_").append(Long.toHexString(random.nextLong())).append("\",\n");
		json.append("  \"meta\": {\"source\": \"mobile\", \"clientTimestamp\": \"2026-03-14T09:26:53.589Z\", ");
		json.append("\"attempt\": 1, \"locale\": \"fr-FR\", \"agent\": \"App/7.4 (iPhone; iOS 18.2)\"},\n");
		json.append("  \"customer\": {\"name\": \"Zoë \\\"Z\\\" Martin\", \"email\": \"zoe@example.com\", ");
		json.append("\"address\": {\"zip\": \"75011\", \"city\": \"Paris\", \"lines\": [\"12 rue de la Roquette\", ");
		json.append("\"Bât. B\\n3e étage\"], \"country\": \"FR\"}, \"vip\": true, \"notes\": null},\n");
		json.append("  \"items\": [");
		// the fixed tail below is about 120 bytes
		int items = 0;
		while (json.length() < size - 120 || items == 0) {
			if (items > 0) {
				json.append(", ");
			}
			item(json, random, items);
			items++;
		}
		json.append("],\n  \"total\": {\"currency\": \"EUR\", \"amount\": ").append(random.nextInt(1_000_000))
			.append('.')
			.append(10 + random.nextInt(90))
			.append(", \"taxRate\": 2.0E-1},\n  \"amountDue\": -0.0, \"express\": false}");
		byte[] bytes = json.toString().getBytes(StandardCharsets.UTF_8);
		if (bytes.length < size) {
			// non-ASCII characters count twice in bytes, never less: only pad
			byte[] padded = new byte[size];
			System.arraycopy(bytes, 0, padded, 0, bytes.length);
			for (int i = bytes.length; i < size; i++) {
				padded[i] = ' ';
			}
			return padded;
		}
		return bytes;
	}

	private static void item(StringBuilder json, SplittableRandom random, int index) {
		// members in an order that is not sorted, and varies between items
		int variant = random.nextInt(3);
		json.append('{');
		if (variant == 0) {
			json.append("\"sku\": \"SKU-").append(100000 + random.nextInt(900000)).append("\", ");
			json.append("\"quantity\": ").append(1 + random.nextInt(20)).append(", ");
		}
		else {
			json.append("\"quantity\": ").append(1 + random.nextInt(20)).append(", ");
			json.append("\"sku\": \"SKU-").append(100000 + random.nextInt(900000)).append("\", ");
		}
		json.append("\"clientRef\": \"").append(Integer.toHexString(random.nextInt())).append("\", ");
		json.append("\"unitPrice\": ").append(random.nextInt(10_000)).append('.').append(random.nextInt(10));
		json.append(random.nextInt(10)).append(", ");
		json.append("\"description\": \"");
		int words = 3 + random.nextInt(6);
		for (int i = 0; i < words; i++) {
			if (i > 0) {
				json.append((random.nextInt(8) == 0) ? "\\t" : " ");
			}
			appendEscaped(json, WORDS[random.nextInt(WORDS.length)], random);
		}
		json.append("\", ");
		json.append("\"tags\": [");
		int tags = random.nextInt(4);
		for (int i = 0; i < tags; i++) {
			if (i > 0) {
				json.append(", ");
			}
			json.append('"').append(WORDS[random.nextInt(WORDS.length)].toLowerCase(Locale.ROOT).replace("\"", "")
				.replace("\\", "")).append('"');
		}
		json.append("], ");
		json.append("\"weight\": ").append(random.nextInt(50)).append('.').append(random.nextInt(1000)).append("e")
			.append(random.nextInt(3) - 1).append(", ");
		json.append("\"attributes\": {\"z-index\": ").append(index).append(", \"color\": \"")
			.append(WORDS[random.nextInt(WORDS.length)].replace("\"", "").replace("\\", ""))
			.append("\", \"giftWrap\": ").append(random.nextBoolean()).append(", \"batch\": null}");
		if (variant == 2) {
			json.append(", \"discount\": {\"percent\": ").append(random.nextInt(50))
				.append(", \"code\": \"SPRING\\u0032026\"}");
		}
		json.append('}');
	}

	private static void appendEscaped(StringBuilder json, String word, SplittableRandom random) {
		for (int i = 0; i < word.length(); i++) {
			char c = word.charAt(i);
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c > 0x7F && random.nextInt(4) == 0) {
				// the same character, escaped as the canonical form never does
				json.append(String.format(Locale.ROOT, "\\u%04X", (int) c));
			}
			else {
				json.append(c);
			}
		}
	}

	/**
	 * Build a typical JSON API response: six headers and a JSON body of at least the
	 * given size.
	 * @param bodySize the minimum body size in bytes
	 * @return the response
	 */
	static StoredResponse response(int bodySize) {
		byte[] body = json(bodySize, 42L + bodySize);
		List<HttpHeader> headers = new ArrayList<>();
		headers.add(new HttpHeader("Content-Type", "application/json;charset=UTF-8"));
		headers.add(new HttpHeader("Location", "/payments/pay_7f3a9c2e41d84b0c9a1e5f6d2b8c0a17"));
		headers.add(new HttpHeader("Cache-Control", "no-store"));
		headers.add(new HttpHeader("ETag", "\"5d41402abc4b2a76b9719d911017c592\""));
		headers.add(new HttpHeader("X-Request-Id", "0f8fad5b-d9cb-469f-a165-70867728950e"));
		headers.add(new HttpHeader("Vary", "Accept-Encoding"));
		return new StoredResponse(201, headers, body);
	}

	/**
	 * Return {@code count} distinct keys in one scope, looking like client-generated
	 * UUIDs.
	 * @param prefix distinguishes the key sets of one benchmark
	 * @param count the number of keys
	 * @return the keys
	 */
	static IdempotencyKey[] keys(String prefix, int count) {
		SplittableRandom random = new SplittableRandom(prefix.hashCode());
		IdempotencyKey[] keys = new IdempotencyKey[count];
		for (int i = 0; i < count; i++) {
			String key = prefix + "-" + Long.toHexString(random.nextLong()) + "-" + Integer.toHexString(i);
			keys[i] = new IdempotencyKey("POST /payments", key);
		}
		return keys;
	}

	/**
	 * Return a fingerprint made of the given seed.
	 * @param seed the seed
	 * @return the fingerprint
	 */
	static RequestFingerprint fingerprint(long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		random.nextBytes(bytes);
		return RequestFingerprint.of(bytes);
	}

	/**
	 * Create an in-memory store that already holds the given number of completed
	 * records, each with its own key and fingerprint and a shared 1 KiB response.
	 * <p>
	 * The store's sweep of expired records starts a pass at most once per sweep interval
	 * (one second by default), and each operation then visits up to a step of records
	 * until the pass ends. It is measured on its own
	 * ({@link InMemoryStoreBenchmark#replayHotKeyWhileSweeping()},
	 * {@link InMemoryStoreBenchmark#sweep()}), so here it is deferred by a day: the
	 * operations measured do not include steps of it.
	 * @param records the number of records
	 * @param ttl the time to live of the records
	 * @return the store
	 */
	static InMemoryIdempotencyStore prefilledStore(int records, Duration ttl) {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		store.setSweepInterval(Duration.ofDays(1));
		StoredResponse response = response(1024);
		IdempotencyKey[] keys = keys("stored", records);
		Duration lease = Duration.ofSeconds(30);
		for (int i = 0; i < records; i++) {
			OwnerToken token = OwnerToken.generate();
			if (!(store.acquire(keys[i], fingerprint(i), token, lease, ttl) instanceof AcquireResult.Acquired)
					|| !store.complete(keys[i], token, response, ttl)) {
				throw new IllegalStateException("Could not prefill the store");
			}
		}
		if (store.size() != records) {
			throw new IllegalStateException("Store holds " + store.size() + " records, not " + records);
		}
		return store;
	}

}
