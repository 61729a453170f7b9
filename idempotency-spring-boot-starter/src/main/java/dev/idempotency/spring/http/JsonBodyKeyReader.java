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
import dev.idempotency.spring.IdempotencyKeySource;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonPointer;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.json.JsonFactory;

/**
 * Reads an idempotency key from a JSON request body at a JSON Pointer
 * ({@link IdempotencyKeySource#jsonPointer(String)}).
 * <p>
 * The whole body is parsed, as strict JSON with one root value, so that a body the
 * application's own parser would refuse never yields a key. The value at the pointer must
 * be a string that is a valid key or an integer (taken as its decimal text). A member on
 * the pointer's path that appears twice in its object makes the key invalid: a parser
 * that keeps the last of duplicate members would read another key than the first.
 *
 * @author Idempotency contributors
 */
public final class JsonBodyKeyReader {

	private static final JsonFactory FACTORY = JsonFactory.builder()
		.disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
		.build();

	private JsonBodyKeyReader() {
	}

	/**
	 * Read the key of a body.
	 * @param body the request body
	 * @param pointer where the key is
	 * @return what was found
	 */
	public static BodyKey read(byte[] body, JsonPointer pointer) {
		try (JsonParser parser = FACTORY.createParser(ObjectReadContext.empty(), body)) {
			JsonToken root = parser.nextToken();
			if (root == null) {
				return BodyKey.NOT_JSON;
			}
			BodyKey key = find(parser, root, pointer);
			// one root value only, and well-formed to its end
			return (parser.nextToken() == null) ? key : BodyKey.NOT_JSON;
		}
		catch (JacksonException ex) {
			return BodyKey.NOT_JSON;
		}
	}

	// the parser is at the first token of a value; leaves it at the value's last token
	private static BodyKey find(JsonParser parser, JsonToken token, JsonPointer rest) {
		if (rest.matches()) {
			return key(parser, token);
		}
		if (token == JsonToken.START_OBJECT) {
			return findMember(parser, rest);
		}
		if (token == JsonToken.START_ARRAY) {
			return findElement(parser, rest);
		}
		return BodyKey.ABSENT;
	}

	private static BodyKey findMember(JsonParser parser, JsonPointer rest) {
		String name = rest.getMatchingProperty();
		BodyKey found = BodyKey.ABSENT;
		boolean seen = false;
		while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
			boolean match = name.equals(parser.currentName());
			JsonToken value = parser.nextToken();
			if (match && !seen) {
				seen = true;
				found = find(parser, value, rest.tail());
			}
			else {
				parser.skipChildren();
				if (match) {
					found = BodyKey.INVALID;
				}
			}
		}
		return found;
	}

	private static BodyKey findElement(JsonParser parser, JsonPointer rest) {
		int index = rest.getMatchingIndex();
		BodyKey found = BodyKey.ABSENT;
		int i = 0;
		for (JsonToken value = parser.nextToken(); value != JsonToken.END_ARRAY; value = parser.nextToken()) {
			if (i++ == index) {
				found = find(parser, value, rest.tail());
			}
			else {
				parser.skipChildren();
			}
		}
		return found;
	}

	private static BodyKey key(JsonParser parser, JsonToken token) {
		if (token == JsonToken.VALUE_STRING || token == JsonToken.VALUE_NUMBER_INT) {
			String key = parser.getString();
			return IdempotencyKey.isValidKey(key) ? new BodyKey(key) : BodyKey.INVALID;
		}
		parser.skipChildren();
		return (token == JsonToken.VALUE_NULL) ? BodyKey.ABSENT : BodyKey.INVALID;
	}

	/**
	 * The key of a body, or why there is none.
	 *
	 * @param key the key, or {@code null} if there is none
	 * @param absent whether the body is JSON without a value at the pointer (or
	 * {@code null} there)
	 */
	public record BodyKey(@Nullable String key, boolean absent) {

		static final BodyKey ABSENT = new BodyKey(null, true);

		static final BodyKey INVALID = new BodyKey(null, false);

		static final BodyKey NOT_JSON = INVALID;

		BodyKey(String key) {
			this(key, false);
		}

	}

}
