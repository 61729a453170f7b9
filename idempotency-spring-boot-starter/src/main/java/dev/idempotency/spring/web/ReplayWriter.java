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

import java.io.IOException;

import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.HttpDates;
import dev.idempotency.spring.http.Refusal;
import dev.idempotency.spring.http.StoredHeaders;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * Writes a stored response as the answer to a retry, with the
 * {@value HttpContract#REPLAYED_HEADER} header, and the
 * {@value HttpContract#EXPIRES_HEADER} header of first responses and replays.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
final class ReplayWriter {

	private final StoredHeaders storedHeaders;

	private final boolean expiresHeader;

	/**
	 * Create a writer.
	 * @param storedHeaders the headers that are replayed
	 * @param expiresHeader whether responses carry the expiry header
	 */
	ReplayWriter(StoredHeaders storedHeaders, boolean expiresHeader) {
		this.storedHeaders = storedHeaders;
		this.expiresHeader = expiresHeader;
	}

	/**
	 * Answer a retry with the response stored under its key, or, when that response
	 * cannot be replayed (unreadable, or stored without its body), say so.
	 * @param replay the decision
	 * @param key the client's key
	 * @param response the response to write
	 * @return {@code null} once the stored response is written, else the refusal to
	 * answer with (the expiry header already set)
	 * @throws IOException if writing fails
	 */
	@Nullable Refusal write(Decision.Replay replay, String key, HttpServletResponse response) throws IOException {
		StoredResponse stored = replay.response();
		if (!stored.isBodyRetained()) {
			if (this.expiresHeader) {
				response.setHeader(HttpContract.EXPIRES_HEADER, HttpDates.format(replay.expiresAt()));
			}
			return stored.isReadable() ? Refusal.responseTooLarge(key, stored.status())
					: Refusal.responseUnreadable(key);
		}
		response.setStatus(stored.status());
		this.storedHeaders.apply(stored.headers(), new ServletHeaders(response));
		response.setHeader(HttpContract.REPLAYED_HEADER, "true");
		if (this.expiresHeader) {
			// after the stored headers, where a first response has it too
			response.setHeader(HttpContract.EXPIRES_HEADER, HttpDates.format(replay.expiresAt()));
		}
		response.setContentLength(stored.bodyLength());
		stored.writeBodyTo(response.getOutputStream());
		return null;
	}

	/**
	 * Advertise when the record of a first response that was stored expires.
	 * @param response the response to the first request
	 * @param execution the completed execution
	 */
	void writeExpiry(HttpServletResponse response, Execution execution) {
		if (this.expiresHeader) {
			response.setHeader(HttpContract.EXPIRES_HEADER, HttpDates.format(execution.advertisedExpiry()));
		}
	}

	/**
	 * Advertise when the record of a first response will expire, before its body, too
	 * large to keep, goes to the client ahead of completion; unless its status is not
	 * stored at all.
	 * @param response the response to the first request
	 * @param execution the running execution
	 */
	void writeExpiryBeforeStreaming(HttpServletResponse response, Execution execution) {
		if (this.expiresHeader && !execution.policy().nonStorableStatuses().contains(response.getStatus())) {
			response.setHeader(HttpContract.EXPIRES_HEADER, HttpDates.format(execution.advertisedExpiry()));
		}
	}

	/**
	 * The headers of a servlet response, as the stored headers are replayed onto them.
	 */
	private record ServletHeaders(HttpServletResponse response) implements StoredHeaders.Target {

		@Override
		public void setContentType(String contentType) {
			this.response.setContentType(contentType);
		}

		@Override
		public void setHeader(String name, String value) {
			this.response.setHeader(name, value);
		}

		@Override
		public void addHeader(String name, String value) {
			this.response.addHeader(name, value);
		}

	}

}
