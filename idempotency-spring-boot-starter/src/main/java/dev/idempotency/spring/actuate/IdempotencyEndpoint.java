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

package dev.idempotency.spring.actuate;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStore;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * Actuator endpoint {@code idempotency}: an operator's view of one key, and a way to
 * evict a stuck one.
 * <ul>
 * <li>read ({@code GET /actuator/idempotency?key=...&scope=...}): the record's state,
 * times, fingerprint and, once completed, the stored status, body size and header names,
 * never the body nor header values; no record answers 404;
 * <li>delete ({@code DELETE /actuator/idempotency?key=...&scope=...}): removes the record
 * whatever its state, so that the next request with the key runs the handler.
 * </ul>
 * The {@code scope} parameter is optional: absent or empty means the global scope (keys
 * of requests without a principal or scope header); otherwise it is the stored scope,
 * which names its source, for example {@code principal:alice} or {@code header:acme} (see
 * {@link dev.idempotency.spring.web.DefaultIdempotencyScopeResolver}). Keys and scopes
 * may hold any visible ASCII character, so URL-encode them
 * ({@code curl -G --data-urlencode}).
 * <p>
 * Like every Actuator endpoint except {@code health}, it is not exposed over HTTP unless
 * {@code management.endpoints.web.exposure.include} names it. Evicting a key can make a
 * handler run twice: secure it as any write operation of the application.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@Endpoint(id = "idempotency")
public class IdempotencyEndpoint {

	private final IdempotencyStore store;

	/**
	 * Create an endpoint.
	 * @param store the store to read and evict from, never {@code null}
	 */
	public IdempotencyEndpoint(IdempotencyStore store) {
		this.store = Objects.requireNonNull(store, "'store' must not be null");
	}

	/**
	 * Describe the record of a key.
	 * @param key the key, as the client sent it without sf-string quotes
	 * @param scope the scope, or {@code null} or empty for the global scope
	 * @return the description, or {@code null} (404) if there is no record
	 */
	@ReadOperation
	public @Nullable KeyDescriptor key(String key, @Nullable String scope) {
		Optional<IdempotencyRecord> record = this.store.find(keyOf(scope, key));
		return record.map(KeyDescriptor::of).orElse(null);
	}

	/**
	 * Delete the record of a key, whatever its state.
	 * @param key the key, as the client sent it without sf-string quotes
	 * @param scope the scope, or {@code null} or empty for the global scope
	 * @return whether a record was deleted
	 */
	@DeleteOperation
	public EvictionDescriptor evict(String key, @Nullable String scope) {
		return new EvictionDescriptor(this.store.evict(keyOf(scope, key)));
	}

	private static IdempotencyKey keyOf(@Nullable String scope, String key) {
		try {
			return new IdempotencyKey((scope != null) ? scope : IdempotencyKey.GLOBAL_SCOPE, key);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid key or scope");
		}
	}

	/**
	 * What the endpoint tells about a record. Times are ISO-8601 instants by the store's
	 * clock.
	 *
	 * @param scope the scope, empty for the global scope
	 * @param key the key
	 * @param state {@code PROCESSING} or {@code COMPLETED}
	 * @param fingerprint the first request's fingerprint, in hex
	 * @param createdAt when the record was created, or {@code null} if the store does not
	 * keep it
	 * @param leaseExpiresAt when the owner's lease lapses, {@code null} once completed
	 * @param expiresAt when the record expires
	 * @param response the stored response once completed, else {@code null}
	 */
	public record KeyDescriptor(String scope, String key, String state, String fingerprint, @Nullable String createdAt,
			@Nullable String leaseExpiresAt, String expiresAt, @Nullable ResponseDescriptor response) {

		static KeyDescriptor of(IdempotencyRecord record) {
			StoredResponse response = record.response();
			return new KeyDescriptor(record.key().scope(), record.key().key(), record.status().name(),
					record.fingerprint().toHex(), text(record.createdAt()), text(record.leaseExpiresAt()),
					record.expiresAt().toString(), (response != null) ? ResponseDescriptor.of(response) : null);
		}

		private static @Nullable String text(@Nullable Instant instant) {
			return (instant != null) ? instant.toString() : null;
		}

	}

	/**
	 * What the endpoint tells about a stored response: never the body nor header values.
	 *
	 * @param status the HTTP status
	 * @param bodyRetained whether the body was kept (it is not when it exceeded
	 * {@code max-response-body}; a replay then answers a problem)
	 * @param bodySize the size of the kept body in bytes
	 * @param headerNames the names of the stored headers
	 */
	public record ResponseDescriptor(int status, boolean bodyRetained, int bodySize, List<String> headerNames) {

		static ResponseDescriptor of(StoredResponse response) {
			List<String> names = new ArrayList<>();
			for (HttpHeader header : response.headers()) {
				if (!names.contains(header.name())) {
					names.add(header.name());
				}
			}
			return new ResponseDescriptor(response.status(), response.isBodyRetained(), response.bodyLength(),
					List.copyOf(names));
		}

	}

	/**
	 * The outcome of an eviction.
	 *
	 * @param evicted whether a record was deleted
	 */
	public record EvictionDescriptor(boolean evicted) {

	}

}
