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

package dev.idempotency.spring.http;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import dev.idempotency.core.HttpHeader;
import org.jspecify.annotations.Nullable;

/**
 * Decides which response headers are stored for replay, reads them from a response and
 * writes them back.
 * <p>
 * Never stored: hop-by-hop headers (and any header named by {@code Connection}),
 * {@code Date}, {@code Content-Length} (recomputed from the body), {@code Set-Cookie} and
 * the filter's own {@code Idempotency-Expires} and {@code Idempotent-Replayed}.
 * {@code Content-Type} is stored unless excluded explicitly, so a replay is interpreted
 * as the original was. A name ending in {@code *} matches every header whose name starts
 * with what precedes it ({@code Access-Control-*}).
 * <p>
 * The same selection applies when a stored response is replayed, so that a header
 * excluded now is not replayed from a record stored before.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
public final class StoredHeaders {

	private static final String CONTENT_TYPE = "content-type";

	private static final Set<String> NEVER_STORED = Set.of("connection", "keep-alive", "proxy-authenticate",
			"proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "date",
			"content-length", "set-cookie", "set-cookie2", "idempotency-expires", "idempotent-replayed");

	private final Names include;

	private final Names exclude;

	/**
	 * Create a selection.
	 * @param include names of the only headers to store besides {@code Content-Type};
	 * empty to store every header that is not excluded
	 * @param exclude names of headers never to store
	 */
	public StoredHeaders(Collection<String> include, Collection<String> exclude) {
		this.include = new Names(include);
		this.exclude = new Names(exclude);
	}

	/**
	 * Read the headers to store from a response, {@code Content-Type} first, then the
	 * others in the order the response reports them.
	 * @param contentType the response's content type, or {@code null}
	 * @param names the names of the response's headers
	 * @param values the values of the response's header of a name
	 * @return the headers
	 */
	public List<HttpHeader> capture(@Nullable String contentType, Collection<String> names,
			Function<String, @Nullable Collection<String>> values) {
		List<HttpHeader> headers = new ArrayList<>();
		if (contentType != null && !this.exclude.matches(CONTENT_TYPE)) {
			headers.add(new HttpHeader("Content-Type", contentType));
		}
		Set<String> seen = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
		Set<String> connectionOptions = connectionOptions(values.apply("Connection"));
		for (String name : names) {
			if (!seen.add(name)) {
				continue;
			}
			String lowerCase = name.toLowerCase(Locale.ROOT);
			if (lowerCase.equals(CONTENT_TYPE) || !isStored(lowerCase) || connectionOptions.contains(lowerCase)) {
				continue;
			}
			Collection<String> nameValues = values.apply(name);
			for (String value : (nameValues != null) ? nameValues : List.<String>of()) {
				if (value != null) {
					headers.add(new HttpHeader(name, value));
				}
			}
		}
		return headers;
	}

	private boolean isStored(String lowerCaseName) {
		if (NEVER_STORED.contains(lowerCaseName) || this.exclude.matches(lowerCaseName)) {
			return false;
		}
		return this.include.isEmpty() || this.include.matches(lowerCaseName);
	}

	private static Set<String> connectionOptions(@Nullable Collection<String> values) {
		if (values == null || values.isEmpty()) {
			return Set.of();
		}
		Set<String> options = new TreeSet<>();
		for (String value : values) {
			for (String option : value.split(",")) {
				options.add(option.strip().toLowerCase(Locale.ROOT));
			}
		}
		return options;
	}

	/**
	 * Write the stored headers that this selection stores onto a response. The first
	 * value of each name replaces what the response already has (filters that run before
	 * this one may set it again on a replay); further values are added.
	 * @param headers the stored headers
	 * @param response the response's headers
	 */
	public void apply(List<HttpHeader> headers, Target response) {
		Set<String> seen = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
		for (HttpHeader header : headers) {
			String lowerCase = header.name().toLowerCase(Locale.ROOT);
			if (lowerCase.equals(CONTENT_TYPE)) {
				if (!this.exclude.matches(CONTENT_TYPE)) {
					response.setContentType(header.value());
				}
			}
			else if (isStored(lowerCase)) {
				if (seen.add(header.name())) {
					response.setHeader(header.name(), header.value());
				}
				else {
					response.addHeader(header.name(), header.value());
				}
			}
		}
	}

	/**
	 * The headers of the response that a stored response is replayed onto.
	 */
	public interface Target {

		/**
		 * Set the response's content type.
		 * @param contentType the content type
		 */
		void setContentType(String contentType);

		/**
		 * Set a header, replacing the values it has.
		 * @param name the name
		 * @param value the value
		 */
		void setHeader(String name, String value);

		/**
		 * Add a value to a header.
		 * @param name the name
		 * @param value the value
		 */
		void addHeader(String name, String value);

	}

	/**
	 * Header names in lower case; a name ending in {@code *} is a prefix.
	 */
	private static final class Names {

		private final Set<String> names = new TreeSet<>();

		private final List<String> prefixes = new ArrayList<>();

		Names(Collection<String> names) {
			for (String name : names) {
				String lowerCase = name.strip().toLowerCase(Locale.ROOT);
				if (lowerCase.endsWith("*")) {
					this.prefixes.add(lowerCase.substring(0, lowerCase.length() - 1));
				}
				else {
					this.names.add(lowerCase);
				}
			}
		}

		boolean isEmpty() {
			return this.names.isEmpty() && this.prefixes.isEmpty();
		}

		boolean matches(String lowerCaseName) {
			if (this.names.contains(lowerCaseName)) {
				return true;
			}
			for (String prefix : this.prefixes) {
				if (lowerCaseName.startsWith(prefix)) {
					return true;
				}
			}
			return false;
		}

	}

}
