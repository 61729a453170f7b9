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

package dev.idempotency.spring.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.test.servers.TestServers;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Property-based fuzzing of the HTTP surface on the Redis store over real HTTP: a seeded
 * generator sends a few hundred requests with valid, quoted, padded, invalid, oversized,
 * non-ASCII and duplicated {@code Idempotency-Key} headers, keys repeated with the same
 * or another body, under several scopes (principal and tenant header), with JSON, broken
 * JSON, form, binary and empty bodies, assorted content types and charsets, sizes around
 * the body limits, and both {@code Content-Length} and chunked framing. After every
 * request it checks that:
 * <ul>
 * <li>nothing answers 5xx;
 * <li>the handler ran at most once per (scope, key), whatever the fingerprint;
 * <li>a replay is byte-identical to the first answer for the same scope and key, and an
 * answer always belongs to the caller's own scope;
 * <li>the key header's forms are judged as the HTTP contract says (missing, invalid,
 * request too large).
 * </ul>
 * The seed is printed; {@code -Didempotency.fuzz.seed=N} replays a run and
 * {@code -Didempotency.fuzz.cases=N} changes its length. A failure names the seed, the
 * case and the request.
 *
 * @author Idempotency contributors
 */
@Import(HttpSurfaceFuzzIT.FuzzConfiguration.class)
@TestPropertySource(properties = { "idempotency.store.type=redis", "idempotency.ttl=10m",
		"spring.data.redis.repositories.enabled=false" })
class HttpSurfaceFuzzIT extends AbstractWebIT {

	private static final String PROBLEM_TYPES = "https://idempotency.dev/problems/";

	private static final int SMALL_LIMIT = 1024;

	private static final int DEFAULT_LIMIT = 1024 * 1024;

	private static final List<String> SCOPE_FORMS = List.of("", "X-User: alice", "X-User: bob", "X-Tenant: t1",
			"X-Tenant:   t1 \t", "X-Tenant: t2\r\nX-User: alice", "X-Tenant: \r\nX-User: bob", "X-Tenant: T1");

	private static final List<String> CONTENT_TYPES = List.of("application/json", "application/json;charset=UTF-8",
			"application/json; charset=utf-8", "APPLICATION/JSON", "text/plain;charset=ISO-8859-1", "text/plain",
			"application/x-www-form-urlencoded", "application/x-www-form-urlencoded;charset=UTF-8",
			"application/octet-stream", "application/problem+json", "");

	private static final List<String> ENDPOINTS = List.of("/fuzz/echo", "/fuzz/json", "/fuzz/small", "/fuzz/form",
			"/fuzz/optional", "/fuzz/status?code=404", "/fuzz/status?code=202", "/fuzz/echo?q=1");

	@Autowired
	Executions executions;

	// (scope, key) -> the first answer the handler (or Spring around it) produced
	private final Map<String, Answer> answers = new HashMap<>();

	private final List<String> recentKeys = new ArrayList<>();

	// requests whose answer is stored: sent again in an equivalent form, they replay
	private final List<Case> replayable = new ArrayList<>();

	@DynamicPropertySource
	static void prefix(DynamicPropertyRegistry registry) {
		registry.add("idempotency.redis.key-prefix", () -> "it-fuzz-" + Long.toHexString(System.nanoTime()) + ":");
	}

	@Test
	void theFilterKeepsItsPromisesForGeneratedRequests() throws Exception {
		long seed = Long.getLong("idempotency.fuzz.seed", new Random().nextLong());
		int cases = Integer.getInteger("idempotency.fuzz.cases", 400);
		System.out
			.println("HttpSurfaceFuzzIT: seed " + seed + " (-Didempotency.fuzz.seed=" + seed + " repeats this run)");
		Random random = new Random(seed);
		Map<String, Integer> statuses = new TreeMap<>();
		for (int i = 0; i < cases; i++) {
			Case request = generate(random);
			Outcome outcome;
			try {
				outcome = exchange(request);
			}
			catch (IOException ex) {
				throw new AssertionError(failure(seed, i, request, "the exchange failed: " + ex), ex);
			}
			statuses.merge(outcome.status + (outcome.replayed ? " replayed" : ""), 1, Integer::sum);
			String violation = check(request, outcome);
			if (violation != null) {
				throw new AssertionError(failure(seed, i, request, violation + "\nresponse: " + outcome));
			}
			if (request.model.key != null && problemType(outcome) == null) {
				this.replayable.add(request);
			}
		}
		System.out.println("HttpSurfaceFuzzIT: " + cases + " cases, statuses " + statuses);
	}

	// ---- the properties

	private @Nullable String check(Case request, Outcome outcome) {
		if (outcome.status >= 500) {
			return "a " + outcome.status + " answer";
		}
		String problem = problemType(outcome);
		String key = request.model.key;
		boolean protectedEndpoint = !request.endpoint.equals("/fuzz/optional") || request.keyHeaders.length > 0;
		if (request.keyHeaders.length == 0 && protectedEndpoint) {
			return expect("idempotency-key-missing", 400, problem, outcome);
		}
		if (key == null && protectedEndpoint) {
			return expect("idempotency-key-invalid", 400, problem, outcome);
		}
		if (key == null) {
			return null;
		}
		int limit = request.endpoint.startsWith("/fuzz/small") ? SMALL_LIMIT : DEFAULT_LIMIT;
		if (request.body.length > limit) {
			return expect("idempotency-request-too-large", 413, problem, outcome);
		}
		String recordKey = request.model.scope + "\u0000" + key;
		int runs = this.executions.count(request.model.scope, key);
		if (runs > 1) {
			return "the handler ran " + runs + " times for scope '" + request.model.scope + "' and key '" + key + "'";
		}
		Answer first = this.answers.get(recordKey);
		if (request.repeat && !outcome.replayed) {
			return "an equivalent request repeated, but its stored answer was not replayed";
		}
		if (outcome.replayed) {
			if (first == null) {
				return "a replay, but this scope never had an answer for this key";
			}
			if (!Arrays.equals(first.body, outcome.body) || first.status != outcome.status) {
				return "a replay that differs from the first answer " + first.status + " "
						+ new String(first.body, StandardCharsets.UTF_8);
			}
			return null;
		}
		if (problem != null) {
			// 422 (another fingerprint) is the only
			// problem a key already answered may get
			if (problem.equals("idempotency-key-reused")) {
				return (first != null) ? null : "422 for a key this scope never used";
			}
			return "unexpected problem " + problem;
		}
		if (first != null) {
			return "a second fresh answer for scope '" + request.model.scope + "' and key '" + key + "', the first was "
					+ first.status + " " + new String(first.body, StandardCharsets.UTF_8);
		}
		String text = new String(outcome.body, StandardCharsets.UTF_8);
		if (outcome.status < 300 && !text.contains("\"scope\":\"" + request.model.scope + "\"")) {
			return "the handler saw another scope than '" + request.model.scope + "'";
		}
		this.answers.put(recordKey, new Answer(outcome.status, outcome.body));
		return null;
	}

	private static @Nullable String expect(String type, int status, @Nullable String problem, Outcome outcome) {
		return (outcome.status == status && type.equals(problem)) ? null
				: "expected " + status + " " + type + ", got " + outcome.status + " " + problem;
	}

	private static @Nullable String problemType(Outcome outcome) {
		String text = new String(outcome.body, StandardCharsets.UTF_8);
		int start = text.indexOf("\"type\":\"" + PROBLEM_TYPES);
		if (start < 0) {
			return null;
		}
		start += ("\"type\":\"" + PROBLEM_TYPES).length();
		return text.substring(start, text.indexOf('"', start));
	}

	// ---- the generator

	private Case generate(Random random) {
		if (!this.replayable.isEmpty() && random.nextInt(10) < 3) {
			return repeat(random, this.replayable.get(random.nextInt(this.replayable.size())));
		}
		String endpoint = pick(random, ENDPOINTS);
		String scope = pick(random, SCOPE_FORMS);
		String baseKey;
		if (!this.recentKeys.isEmpty() && random.nextInt(10) < 5) {
			baseKey = this.recentKeys.get(random.nextInt(this.recentKeys.size()));
		}
		else {
			baseKey = token(random, 1 + random.nextInt((random.nextInt(10) == 0) ? 255 : 40));
			this.recentKeys.add(baseKey);
			if (this.recentKeys.size() > 30) {
				this.recentKeys.remove(0);
			}
		}
		byte[][] keyHeaders = keyHeaders(random, baseKey);
		String contentType = pick(random, CONTENT_TYPES);
		byte[] body = body(random, endpoint, contentType);
		boolean chunked = random.nextInt(4) == 0;
		return new Case(endpoint, scope, keyHeaders, contentType, body, chunked,
				new Model(modelScope(scope), modelKey(keyHeaders)), false);
	}

	// the same request in another form that must not matter: the key bare, quoted or
	// padded, the tenant padded, the other framing
	private static Case repeat(Random random, Case original) {
		String key = original.model.key;
		boolean bare = key.indexOf(',') < 0 && !key.startsWith("\"") && random.nextBoolean();
		String value = bare ? key : "\"" + escape(key) + "\"";
		if (random.nextBoolean()) {
			value = " " + value + "\t";
		}
		byte[][] keyHeaders = { RawHttp.ascii("Idempotency-Key: " + value) };
		String scope = original.scopeHeaders;
		if (scope.equals("X-Tenant: t1") || scope.equals("X-Tenant:   t1 \t")) {
			scope = random.nextBoolean() ? "X-Tenant: t1" : "X-Tenant:   t1 \t";
		}
		Case repeated = new Case(original.endpoint, scope, keyHeaders, original.contentType, original.body,
				random.nextBoolean(), new Model(modelScope(scope), modelKey(keyHeaders)), true);
		if (!repeated.model.equals(original.model)) {
			throw new IllegalStateException("The generator changed the model: " + original + " -> " + repeated);
		}
		return repeated;
	}

	// the key header as a client might send it; null entries are left out
	private static byte[][] keyHeaders(Random random, String key) {
		int form = random.nextInt(32);
		String value = switch (form) {
			case 0 -> null;
			case 1 -> "";
			case 2 -> key + "x".repeat(Math.max(1, 256 - key.length()));
			case 3 -> key.substring(0, key.length() / 2) + " " + key.substring(key.length() / 2);
			case 4 -> key + "," + key;
			case 5 -> "\"" + key + "\";a=1";
			case 6 -> "\"" + escape(key) + "\"";
			case 7 -> " \t" + key + " ";
			case 8 -> "\"" + escape(key) + "\" ";
			case 9 -> "\"" + key;
			case 10 -> key + "\t" + key;
			default -> key;
		};
		if (value == null) {
			return new byte[0][];
		}
		byte[] header = RawHttp.concat(RawHttp.ascii("Idempotency-Key: "), RawHttp.ascii(value));
		if (form == 11) {
			header = RawHttp.concat(RawHttp.ascii("Idempotency-Key: " + key), "-ü€".getBytes(StandardCharsets.UTF_8));
		}
		if (form == 12) {
			return new byte[][] { header, header };
		}
		return new byte[][] { header };
	}

	private static String escape(String key) {
		return key.replace("\\", "\\\\").replace("\"", "\\\"");
	}

	private static String token(Random random, int length) {
		StringBuilder token = new StringBuilder(length);
		while (token.length() < length) {
			char c = (char) (0x21 + random.nextInt(0x7E - 0x21 + 1));
			if (c == ',' || (token.length() == 0 && c == '"')) {
				continue;
			}
			token.append(c);
		}
		return token.toString();
	}

	private static byte[] body(Random random, String endpoint, String contentType) {
		int kind = random.nextInt(12);
		if (kind == 0) {
			return new byte[0];
		}
		if (kind == 1) {
			return RawHttp.ascii("{\"amount\": 12, \"currency\": \"EUR\"");
		}
		if (kind == 2) {
			byte[] bytes = new byte[random.nextInt(300)];
			random.nextBytes(bytes);
			return bytes;
		}
		if (kind == 3) {
			return "name=gr%C3%BC%C3%9Fe&q=a+b&name=zwei".getBytes(StandardCharsets.US_ASCII);
		}
		if (kind == 4) {
			// around the limit of the endpoint: one byte under, at, or over it
			int limit = endpoint.startsWith("/fuzz/small") ? SMALL_LIMIT : DEFAULT_LIMIT;
			int size = limit - 1 + random.nextInt(3);
			byte[] bytes = new byte[size];
			Arrays.fill(bytes, (byte) 'a');
			return bytes;
		}
		if (kind == 5) {
			return "{\"text\":\"grüße 😀 \\u00fc\",\"n\":[1,2,3]}"
				.getBytes(contentType.contains("ISO-8859-1") ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
		}
		// JSON objects from a small vocabulary, so that the same content recurs in
		// another key order or spacing
		int fields = 1 + random.nextInt(3);
		List<String> members = new ArrayList<>();
		for (int i = 0; i < fields; i++) {
			members.add("\"f" + random.nextInt(3) + "\":" + random.nextInt(3));
		}
		if (random.nextBoolean()) {
			Collections.reverse(members);
		}
		String separator = random.nextBoolean() ? "," : " ,\n ";
		return ("{" + String.join(separator, members) + "}").getBytes(StandardCharsets.UTF_8);
	}

	private static <T> T pick(Random random, List<T> values) {
		return values.get(random.nextInt(values.size()));
	}

	// ---- the model of the contract: which key and which scope a request has

	private static String modelScope(String scopeHeaders) {
		String tenant = null;
		String user = null;
		for (String line : scopeHeaders.split("\r\n")) {
			int colon = line.indexOf(':');
			if (colon < 0) {
				continue;
			}
			String value = line.substring(colon + 1).strip();
			if (line.startsWith("X-Tenant")) {
				tenant = value;
			}
			else if (line.startsWith("X-User")) {
				user = value;
			}
		}
		if (tenant != null && !tenant.isEmpty()) {
			return DefaultIdempotencyScopeResolver.HEADER_SCOPE_PREFIX + tenant;
		}
		return (user != null) ? DefaultIdempotencyScopeResolver.PRINCIPAL_SCOPE_PREFIX + user
				: IdempotencyKey.GLOBAL_SCOPE;
	}

	// the key the contract reads from the header(s), or null when they do not hold
	// exactly one valid key
	private static @Nullable String modelKey(byte[][] headers) {
		if (headers.length != 1) {
			return null;
		}
		String line = new String(headers[0], StandardCharsets.ISO_8859_1);
		String value = line.substring(line.indexOf(':') + 1).replaceAll("^[ \t]+|[ \t]+$", "");
		String key;
		if (value.startsWith("\"")) {
			StringBuilder unquoted = new StringBuilder();
			int i = 1;
			boolean closed = false;
			while (i < value.length()) {
				char c = value.charAt(i++);
				if (c == '\\') {
					if (i == value.length() || (value.charAt(i) != '"' && value.charAt(i) != '\\')) {
						return null;
					}
					unquoted.append(value.charAt(i++));
				}
				else if (c == '"') {
					closed = i == value.length();
					break;
				}
				else {
					unquoted.append(c);
				}
			}
			if (!closed) {
				return null;
			}
			key = unquoted.toString();
		}
		else {
			if (value.indexOf(',') >= 0) {
				return null;
			}
			key = value;
		}
		boolean visibleAscii = key.chars().allMatch((c) -> c >= 0x21 && c <= 0x7E);
		return (!key.isEmpty() && key.length() <= IdempotencyKey.MAX_KEY_LENGTH && visibleAscii) ? key : null;
	}

	// ---- raw HTTP/1.1, so that any header form and either framing can be sent

	private Outcome exchange(Case request) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		head.writeBytes(RawHttp.ascii("POST " + request.endpoint + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
		head.writeBytes(RawHttp.ascii("Connection: close\r\n"));
		if (!request.scopeHeaders.isEmpty()) {
			head.writeBytes(RawHttp.ascii(request.scopeHeaders + "\r\n"));
		}
		for (byte[] header : request.keyHeaders) {
			head.writeBytes(header);
			head.writeBytes(RawHttp.ascii("\r\n"));
		}
		if (!request.contentType.isEmpty()) {
			head.writeBytes(RawHttp.ascii("Content-Type: " + request.contentType + "\r\n"));
		}
		head.writeBytes(RawHttp.ascii(request.chunked ? "Transfer-Encoding: chunked\r\n"
				: "Content-Length: " + request.body.length + "\r\n"));
		head.writeBytes(RawHttp.ascii("\r\n"));
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(20_000);
			OutputStream out = socket.getOutputStream();
			out.write(head.toByteArray());
			try {
				out.write(request.chunked ? chunked(request.body) : request.body);
				out.flush();
			}
			catch (IOException ex) {
				// the server may answer (413) and stop reading: read what it said
			}
			InputStream in = socket.getInputStream();
			return parse(in.readAllBytes());
		}
	}

	private static byte[] chunked(byte[] body) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		int chunk = Math.max(1, body.length / 3 + 1);
		for (int i = 0; i < body.length; i += chunk) {
			int length = Math.min(chunk, body.length - i);
			out.writeBytes(RawHttp.ascii(Integer.toHexString(length) + "\r\n"));
			out.write(body, i, length);
			out.writeBytes(RawHttp.ascii("\r\n"));
		}
		out.writeBytes(RawHttp.ascii("0\r\n\r\n"));
		return out.toByteArray();
	}

	private static Outcome parse(byte[] all) throws IOException {
		int end = indexOf(all, RawHttp.ascii("\r\n\r\n"), 0);
		if (end < 0) {
			throw new IOException("no complete response: " + new String(all, StandardCharsets.ISO_8859_1));
		}
		String headers = new String(all, 0, end, StandardCharsets.ISO_8859_1);
		int status = Integer.parseInt(headers.substring(9, 12));
		byte[] body = Arrays.copyOfRange(all, end + 4, all.length);
		String lower = headers.toLowerCase(Locale.ROOT);
		if (lower.contains("\r\ntransfer-encoding: chunked")) {
			body = dechunk(body);
		}
		boolean replayed = lower
			.contains("\r\n" + IdempotencyFilter.REPLAYED_HEADER.toLowerCase(Locale.ROOT) + ": true");
		return new Outcome(status, headers, body, replayed);
	}

	private static byte[] dechunk(byte[] data) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		int position = 0;
		while (true) {
			int lineEnd = indexOf(data, RawHttp.ascii("\r\n"), position);
			if (lineEnd < 0) {
				throw new IOException("truncated chunked body");
			}
			String size = new String(data, position, lineEnd - position, StandardCharsets.US_ASCII);
			int length = Integer.parseInt(size.split(";")[0].trim(), 16);
			if (length == 0) {
				return out.toByteArray();
			}
			out.write(data, lineEnd + 2, length);
			position = lineEnd + 2 + length + 2;
		}
	}

	private static int indexOf(byte[] data, byte[] pattern, int from) {
		for (int i = from; i + pattern.length <= data.length; i++) {
			if (Arrays.equals(data, i, i + pattern.length, pattern, 0, pattern.length)) {
				return i;
			}
		}
		return -1;
	}

	private String failure(long seed, int index, Case request, String violation) {
		return "Property violated at case " + index + " of seed " + seed + " (-Didempotency.fuzz.seed=" + seed + "): "
				+ violation + "\nrequest: " + request;
	}

	record Model(String scope, @Nullable String key) {

	}

	record Case(String endpoint, String scopeHeaders, byte[][] keyHeaders, String contentType, byte[] body,
			boolean chunked, Model model, boolean repeat) {

		@Override
		public String toString() {
			StringBuilder text = new StringBuilder(this.repeat ? "(repeated) POST " : "POST ").append(this.endpoint);
			text.append(" scope headers [").append(this.scopeHeaders.replace("\r\n", "\\r\\n")).append(']');
			for (byte[] header : this.keyHeaders) {
				text.append(" [").append(new String(header, StandardCharsets.UTF_8)).append(']');
			}
			text.append(" Content-Type [").append(this.contentType).append("] ");
			text.append(this.chunked ? "chunked" : "content-length").append(", body ").append(this.body.length);
			text.append(" bytes: ");
			String body = new String(this.body, 0, Math.min(this.body.length, 200), StandardCharsets.UTF_8);
			text.append(body.replace("\r", "\\r").replace("\n", "\\n"));
			text.append("\nmodel: scope '")
				.append(this.model.scope)
				.append("', key '")
				.append(this.model.key)
				.append("'");
			return text.toString();
		}

	}

	record Outcome(int status, String headers, byte[] body, boolean replayed) {

		@Override
		public String toString() {
			String text = new String(this.body, 0, Math.min(this.body.length, 400), StandardCharsets.UTF_8);
			return this.status + (this.replayed ? " (replayed) " : " ") + text;
		}

	}

	record Answer(int status, byte[] body) {

	}

	/**
	 * Counts the handler's runs per (scope, key) as the filter resolved them.
	 */
	static class Executions {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		int record(HttpServletRequest request) {
			Object key = request.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE);
			if (!(key instanceof IdempotencyKey idempotencyKey)) {
				return 0;
			}
			return this.runs
				.computeIfAbsent(idempotencyKey.scope() + "\u0000" + idempotencyKey.key(),
						(name) -> new AtomicInteger())
				.incrementAndGet();
		}

		int count(String scope, String key) {
			AtomicInteger count = this.runs.get(scope + "\u0000" + key);
			return (count != null) ? count.get() : 0;
		}

	}

	@TestConfiguration(proxyBeanMethods = false)
	static class FuzzConfiguration {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

		@Bean
		Executions executions() {
			return new Executions();
		}

		@Bean
		FuzzController fuzzController(Executions executions) {
			return new FuzzController(executions);
		}

	}

	@RestController
	static class FuzzController {

		private final Executions executions;

		FuzzController(Executions executions) {
			this.executions = executions;
		}

		@PostMapping(path = "/fuzz/echo", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		ResponseEntity<String> echo(@RequestBody(required = false) byte @Nullable [] body, HttpServletRequest request) {
			return ResponseEntity.status(HttpStatus.CREATED).body(describe(request, (body != null) ? body.length : 0));
		}

		@PostMapping(path = "/fuzz/json", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		String json(@RequestBody Map<String, Object> body, HttpServletRequest request) {
			return describe(request, body.size());
		}

		@PostMapping(path = "/fuzz/small", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent("small")
		String small(@RequestBody(required = false) byte @Nullable [] body, HttpServletRequest request) {
			return describe(request, (body != null) ? body.length : 0);
		}

		@PostMapping(path = "/fuzz/form", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		String form(HttpServletRequest request) {
			return describe(request, request.getParameterMap().size());
		}

		@PostMapping(path = "/fuzz/optional", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent(required = false)
		String optional(@RequestBody(required = false) byte @Nullable [] body, HttpServletRequest request) {
			return describe(request, (body != null) ? body.length : 0);
		}

		@PostMapping(path = "/fuzz/status", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		ResponseEntity<String> status(@RequestParam int code, HttpServletRequest request) {
			return ResponseEntity.status(code).body(describe(request, 0));
		}

		private String describe(HttpServletRequest request, int size) {
			this.executions.record(request);
			Object key = request.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE);
			String scope = (key instanceof IdempotencyKey idempotencyKey) ? idempotencyKey.scope() : "(none)";
			// a JSON string of the scope; the generated scopes are plain ASCII
			return "{\"scope\":\"" + scope + "\",\"size\":" + size + ",\"run\":\"" + UUID.randomUUID() + "\"}";
		}

	}

}
