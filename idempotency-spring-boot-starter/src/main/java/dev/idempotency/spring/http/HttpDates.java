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

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * Formats instants as HTTP dates (RFC 9110 IMF-fixdate). The last date formatted is kept:
 * responses completed in the same second under the same TTL advertise the same expiry, so
 * most calls return it without formatting.
 *
 * @author Idempotency contributors
 */
public final class HttpDates {

	private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter
		.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
		.withZone(ZoneOffset.UTC);

	private static volatile Formatted last = new Formatted(Long.MIN_VALUE, "");

	private HttpDates() {
	}

	/**
	 * Format an instant as an HTTP date (RFC 9110 IMF-fixdate), to the second.
	 * @param instant the instant
	 * @return the date
	 */
	public static String format(Instant instant) {
		long second = instant.getEpochSecond();
		Formatted cached = last;
		if (cached.second() == second) {
			return cached.text();
		}
		String text = IMF_FIXDATE.format(Instant.ofEpochSecond(second));
		last = new Formatted(second, text);
		return text;
	}

	private record Formatted(long second, String text) {
	}

}
