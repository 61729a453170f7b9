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

import dev.idempotency.core.IdempotencyKey;
import org.jspecify.annotations.Nullable;

/**
 * Parser of the value of an idempotency key header: a bare token or an RFC 8941
 * sf-string, whose quotes are not part of the key.
 *
 * @author Idempotency contributors
 */
public final class KeyHeaderParser {

	/**
	 * Longest header value worth parsing: a quoted key whose every character is escaped.
	 */
	private static final int MAX_VALUE_LENGTH = IdempotencyKey.MAX_KEY_LENGTH * 2 + 2;

	private KeyHeaderParser() {
	}

	/**
	 * Parse one header value.
	 * @param value the raw value
	 * @return the key, or {@code null} if the value is not exactly one valid key
	 */
	public static @Nullable String parse(String value) {
		int start = 0;
		int end = value.length();
		while (start < end && isOptionalWhitespace(value.charAt(start))) {
			start++;
		}
		while (end > start && isOptionalWhitespace(value.charAt(end - 1))) {
			end--;
		}
		if (start == end || end - start > MAX_VALUE_LENGTH) {
			return null;
		}
		if (value.charAt(start) == '"') {
			return parseString(value, start + 1, end);
		}
		String key = value.substring(start, end);
		// a comma outside a string separates list members: several keys
		return (key.indexOf(',') < 0 && IdempotencyKey.isValidKey(key)) ? key : null;
	}

	private static @Nullable String parseString(String value, int start, int end) {
		StringBuilder key = new StringBuilder(end - start);
		int i = start;
		while (i < end) {
			char c = value.charAt(i++);
			if (c == '\\') {
				if (i == end) {
					return null;
				}
				char escaped = value.charAt(i++);
				if (escaped != '"' && escaped != '\\') {
					return null;
				}
				key.append(escaped);
			}
			else if (c == '"') {
				// nothing (no parameters, no second member) may follow the string
				return (i == end && IdempotencyKey.isValidKey(key.toString())) ? key.toString() : null;
			}
			else if (c < 0x20 || c > 0x7E) {
				return null;
			}
			else {
				key.append(c);
			}
		}
		return null;
	}

	private static boolean isOptionalWhitespace(char c) {
		return c == ' ' || c == '\t';
	}

}
