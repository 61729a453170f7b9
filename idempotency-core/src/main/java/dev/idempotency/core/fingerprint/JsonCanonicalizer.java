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

package dev.idempotency.core.fingerprint;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;

import dev.idempotency.core.fingerprint.FingerprintWorkspace.Member;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonFactoryBuilder;
import tools.jackson.core.json.JsonReadFeature;

/**
 * Writes the canonical form of a JSON document, streaming it through Jackson's parser.
 * <p>
 * This is the only class that uses Jackson, which is an optional dependency: it is loaded
 * only after {@link Sha256RequestFingerprinter} has found Jackson on the class path.
 * <p>
 * The canonical form is the document as strict JSON (RFC 8259) with:
 * <ul>
 * <li>no insignificant whitespace;</li>
 * <li>the members of every object sorted by name, comparing the unescaped names code
 * point by code point (which is also the order of their UTF-8 bytes);</li>
 * <li>strings and names written as UTF-8 with the fewest escapes: only {@code "},
 * {@code \} and the control characters U+0000 to U+001F are escaped, as {@code \b},
 * {@code \t}, {@code \n}, {@code \f}, {@code \r} or else <code>&#92;u00xx</code> with
 * lower-case hexadecimal digits (a surrogate that is not part of a pair is written as the
 * three bytes of its code unit);</li>
 * <li>numbers exactly as written: {@code 1}, {@code 1.0}, {@code 1.00}, {@code 1e0} and
 * {@code -0} stay different, because an application may treat them differently (a
 * {@code BigDecimal} keeps the scale of {@code 1.00}; an integer field may reject
 * {@code 1.0}), and no number is ever rounded;</li>
 * <li>array elements and the other literals unchanged;</li>
 * <li>the values at the excluded locations left out: an excluded object member disappears
 * with its name, an excluded array element disappears from the array. Locations are those
 * of the original document, so excluding {@code /0} does not shift the index of other
 * elements for other pointers.</li>
 * </ul>
 * A document is not canonicalised (the caller falls back to its raw bytes) when it is not
 * strict JSON in well-formed UTF-8 (no overlong forms, encoded surrogates, truncated
 * sequences, {@code NUL} bytes or byte order mark), holds anything after the first value,
 * nests objects and arrays deeper than {@value #MAX_DEPTH} levels, or has an object with
 * the same member name twice (which parsers resolve differently, so no single meaning can
 * be canonicalised), counting members at excluded locations too.
 * <p>
 * Objects are written in place as they arrive; an object whose members did not arrive in
 * order is rewritten once it ends, moving the byte ranges of its members. Nothing is
 * built per node.
 *
 * @author Idempotency contributors
 */
final class JsonCanonicalizer {

	/**
	 * Deepest nesting of objects and arrays that is canonicalised. Deeper documents are
	 * fingerprinted as raw bytes, which bounds the recursion on hostile input.
	 */
	static final int MAX_DEPTH = 256;

	private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

	private static final byte[] TRUE = { 't', 'r', 'u', 'e' };

	private static final byte[] FALSE = { 'f', 'a', 'l', 's', 'e' };

	private static final byte[] NULL = { 'n', 'u', 'l', 'l' };

	private static final JsonFactory FACTORY = createFactory();

	private static final Comparator<Member> BY_NAME = (a, b) -> compare(a.name, b.name);

	private final JsonParser parser;

	private final FingerprintWorkspace workspace;

	private final FingerprintBuffer out;

	private int memberTop;

	private JsonCanonicalizer(JsonParser parser, FingerprintWorkspace workspace) {
		this.parser = parser;
		this.workspace = workspace;
		this.out = workspace.json;
	}

	private static JsonFactory createFactory() {
		// Every limit is explicit so that a new Jackson version with other defaults does
		// not change which bodies are canonicalised, and so their fingerprints. Length
		// limits are left to the request body limit that applies before fingerprinting.
		StreamReadConstraints constraints = StreamReadConstraints.builder()
			.maxNestingDepth(MAX_DEPTH)
			.maxNumberLength(Integer.MAX_VALUE)
			.maxStringLength(Integer.MAX_VALUE)
			.maxNameLength(Integer.MAX_VALUE)
			.maxDocumentLength(-1)
			.maxTokenCount(-1)
			.build();
		JsonFactoryBuilder builder = JsonFactory.builder()
			.streamReadConstraints(constraints)
			.disable(StreamReadFeature.STRICT_DUPLICATE_DETECTION, StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION);
		// strict JSON only: a leniency would make bodies equal that the application's
		// own parser may tell apart or reject
		for (JsonReadFeature feature : JsonReadFeature.values()) {
			builder.disable(feature);
		}
		return builder.build();
	}

	/**
	 * Check that the Jackson on the class path has everything this class uses.
	 * @throws LinkageError if it does not
	 */
	static void verify() {
		FingerprintWorkspace workspace = FingerprintWorkspace.acquire();
		try {
			byte[] document = "{\"b\":[1,\"\\u00e9\"],\"a\":null}".getBytes(StandardCharsets.UTF_8);
			if (!canonicalize(workspace, document, document.length, null)) {
				throw new LinkageError("Jackson could not parse a trivial JSON document");
			}
		}
		finally {
			FingerprintWorkspace.release(workspace);
		}
	}

	/**
	 * Write the canonical form of a JSON document into the workspace's
	 * {@link FingerprintWorkspace#json json} buffer.
	 * @param workspace the workspace
	 * @param body the document
	 * @param length the number of bytes of the document, from index 0
	 * @param exclusions the excluded locations, or {@code null}
	 * @return {@code true} if the canonical form was written, {@code false} if the body
	 * is not canonicalisable and must be fingerprinted as raw bytes
	 */
	static boolean canonicalize(FingerprintWorkspace workspace, byte[] body, int length,
			@Nullable JsonPointerTree exclusions) {
		workspace.json.reset();
		if (!isStrictUtf8(body, length)) {
			return false;
		}
		// The canonical form is never longer than the document (it drops whitespace and
		// never escapes more than the document must), so this is the only allocation.
		// Grown by doubling from 256 bytes, it made FingerprintBenchmark allocate
		// 1,029 KB per canonical fingerprint of the 256 KiB document; sized once, 770 KB.
		workspace.json.ensure(length);
		try (JsonParser parser = FACTORY.createParser(ObjectReadContext.empty(), body, 0, length)) {
			JsonToken token = parser.nextToken();
			if (token == null) {
				return false;
			}
			JsonCanonicalizer canonicalizer = new JsonCanonicalizer(parser, workspace);
			canonicalizer.value(token, exclusions, 0);
			// a second root value or anything else after the document makes it not JSON
			return parser.nextToken() == null;
		}
		catch (JacksonException | NotCanonicalException ex) {
			return false;
		}
	}

	/**
	 * Whether a document is well-formed UTF-8 that Jackson's parser reads as UTF-8, which
	 * is how Spring's JSON converter decodes it too. Jackson accepts overlong forms
	 * ({@code C0 AF} for {@code /}) and encoded surrogates, and detects UTF-16 and UTF-32
	 * from {@code NUL} bytes; a byte order mark is skipped by Jackson but not by a
	 * handler that reads the body as a string. Such documents have no single meaning, so
	 * they are not canonicalised. Strict JSON never holds a raw {@code NUL}.
	 * @param body the document
	 * @param length the number of bytes of the document, from index 0
	 * @return {@code true} if the document is well-formed UTF-8 without {@code NUL} bytes
	 * or a leading byte order mark
	 */
	static boolean isStrictUtf8(byte[] body, int length) {
		// A CharsetDecoder would find the malformed sequences too, but only by decoding
		// into a buffer as large as the body; this pass allocates nothing and took about
		// 0.5 µs on FingerprintBenchmark's 1,047-byte document (docs/benchmarks/jmh.md).
		if (length >= 3 && body[0] == (byte) 0xEF && body[1] == (byte) 0xBB && body[2] == (byte) 0xBF) {
			return false;
		}
		int i = 0;
		while (i < length) {
			int b = body[i];
			if (b > 0) {
				i++;
				continue;
			}
			if (b == 0) {
				return false;
			}
			b &= 0xFF;
			// ranges of the second byte from RFC 3629 section 4, which exclude overlong
			// forms, surrogates and code points beyond U+10FFFF
			if (b >= 0xC2 && b <= 0xDF) {
				if (i + 1 >= length || !isContinuation(body[i + 1])) {
					return false;
				}
				i += 2;
			}
			else if (b >= 0xE0 && b <= 0xEF) {
				if (i + 2 >= length) {
					return false;
				}
				int second = body[i + 1] & 0xFF;
				int low = (b == 0xE0) ? 0xA0 : 0x80;
				int high = (b == 0xED) ? 0x9F : 0xBF;
				if (second < low || second > high || !isContinuation(body[i + 2])) {
					return false;
				}
				i += 3;
			}
			else if (b >= 0xF0 && b <= 0xF4) {
				if (i + 3 >= length) {
					return false;
				}
				int second = body[i + 1] & 0xFF;
				int low = (b == 0xF0) ? 0x90 : 0x80;
				int high = (b == 0xF4) ? 0x8F : 0xBF;
				if (second < low || second > high || !isContinuation(body[i + 2]) || !isContinuation(body[i + 3])) {
					return false;
				}
				i += 4;
			}
			else {
				// a continuation byte without a lead, C0, C1 or F5 to FF
				return false;
			}
		}
		return true;
	}

	private static boolean isContinuation(byte b) {
		return (b & 0xC0) == 0x80;
	}

	private void value(JsonToken token, @Nullable JsonPointerTree node, int depth) {
		switch (token) {
			case START_OBJECT -> object(node, depth + 1);
			case START_ARRAY -> array(node, depth + 1);
			case VALUE_STRING ->
				string(this.parser.getStringCharacters(), this.parser.getStringOffset(), this.parser.getStringLength());
			case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> number();
			case VALUE_TRUE -> this.out.write(TRUE, 0, TRUE.length);
			case VALUE_FALSE -> this.out.write(FALSE, 0, FALSE.length);
			case VALUE_NULL -> this.out.write(NULL, 0, NULL.length);
			default -> throw new NotCanonicalException();
		}
	}

	private void object(@Nullable JsonPointerTree node, int depth) {
		checkDepth(depth);
		FingerprintBuffer out = this.out;
		out.write('{');
		int base = this.memberTop;
		int regionStart = out.length();
		boolean inOrder = true;
		boolean written = false;
		JsonToken token;
		while ((token = this.parser.nextToken()) == JsonToken.PROPERTY_NAME) {
			String name = this.parser.currentName();
			JsonPointerTree child = (node != null) ? node.member(name) : null;
			JsonToken valueToken = this.parser.nextToken();
			if (this.memberTop > base && compare(this.workspace.members[this.memberTop - 1].name, name) >= 0) {
				inOrder = false;
			}
			if (child != null && child.isExcluded()) {
				// still parsed, so that an invalid excluded value makes the body invalid
				this.parser.skipChildren();
				push(name, -1, -1);
				continue;
			}
			if (written) {
				out.write(',');
			}
			written = true;
			int start = out.length();
			string(name);
			out.write(':');
			value(valueToken, child, depth);
			push(name, start, out.length());
		}
		if (token != JsonToken.END_OBJECT) {
			throw new NotCanonicalException();
		}
		if (!inOrder) {
			sortMembers(base, regionStart);
		}
		clearMembers(base);
		out.write('}');
	}

	private void array(@Nullable JsonPointerTree node, int depth) {
		checkDepth(depth);
		FingerprintBuffer out = this.out;
		out.write('[');
		int index = 0;
		boolean written = false;
		JsonToken token;
		while ((token = this.parser.nextToken()) != JsonToken.END_ARRAY) {
			if (token == null) {
				throw new NotCanonicalException();
			}
			JsonPointerTree child = (node != null) ? node.element(index) : null;
			index++;
			if (child != null && child.isExcluded()) {
				this.parser.skipChildren();
				continue;
			}
			if (written) {
				out.write(',');
			}
			written = true;
			value(token, child, depth);
		}
		out.write(']');
	}

	private static void checkDepth(int depth) {
		// Jackson enforces the same limit; this keeps the recursion bounded on its own
		if (depth > MAX_DEPTH) {
			throw new NotCanonicalException();
		}
	}

	private void push(String name, int start, int end) {
		this.workspace.member(this.memberTop).set(name, start, end);
		this.memberTop++;
	}

	private void clearMembers(int base) {
		Member[] members = this.workspace.members;
		for (int i = base; i < this.memberTop; i++) {
			members[i].clear();
		}
		this.memberTop = base;
	}

	/**
	 * Rewrite the members of the object that started at {@code regionStart} in name
	 * order.
	 * @param base the index of the object's first member on the member stack
	 * @param regionStart where the first member starts in the output
	 */
	private void sortMembers(int base, int regionStart) {
		FingerprintWorkspace workspace = this.workspace;
		Member[] members = workspace.members;
		int top = this.memberTop;
		// Below 32 elements Arrays.sort is a binary insertion sort that allocates
		// nothing, and every object of FingerprintBenchmark's documents is that small;
		// a larger object costs TimSort's temporary array. The benchmark's canonical
		// modes, where every object arrives out of order, would show what it costs.
		Arrays.sort(members, base, top, BY_NAME);
		for (int i = base + 1; i < top; i++) {
			if (members[i - 1].name.equals(members[i].name)) {
				throw new NotCanonicalException();
			}
		}
		FingerprintBuffer out = this.out;
		int regionLength = out.length() - regionStart;
		byte[] scratch = workspace.scratch(regionLength);
		System.arraycopy(out.bytes(), regionStart, scratch, 0, regionLength);
		out.setLength(regionStart);
		boolean written = false;
		for (int i = base; i < top; i++) {
			Member member = members[i];
			if (member.start < 0) {
				continue;
			}
			if (written) {
				out.write(',');
			}
			written = true;
			out.write(scratch, member.start - regionStart, member.end - member.start);
		}
	}

	/**
	 * Compare two names by code point. {@link String#compareTo} compares UTF-16 code
	 * units, which puts supplementary characters (surrogate pairs) before U+E000 to
	 * U+FFFF; shifting the code units of those ranges restores code point order.
	 * @param a one name
	 * @param b another name
	 * @return the comparison result
	 */
	static int compare(String a, String b) {
		int length = Math.min(a.length(), b.length());
		for (int i = 0; i < length; i++) {
			char x = a.charAt(i);
			char y = b.charAt(i);
			if (x != y) {
				return codePointOrder(x) - codePointOrder(y);
			}
		}
		return a.length() - b.length();
	}

	private static int codePointOrder(char c) {
		if (c < 0xD800) {
			return c;
		}
		return (c >= 0xE000) ? c - 0x800 : c + 0x2000;
	}

	private void number() {
		// the parser has checked the JSON number syntax, so the text is plain ASCII
		char[] chars = this.parser.getStringCharacters();
		int offset = this.parser.getStringOffset();
		int length = this.parser.getStringLength();
		FingerprintBuffer out = this.out;
		out.ensure(length);
		byte[] bytes = out.bytes();
		int n = out.length();
		for (int i = 0; i < length; i++) {
			bytes[n++] = (byte) chars[offset + i];
		}
		out.setLength(n);
	}

	private void string(String value) {
		int length = value.length();
		char[] chars = this.workspace.chars(length);
		value.getChars(0, length, chars, 0);
		string(chars, 0, length);
	}

	private void string(char[] chars, int offset, int length) {
		FingerprintBuffer out = this.out;
		// Room for the quotes and one byte per character, so that the common
		// case, a printable ASCII character, is a plain array store. A character
		// that needs more makes room for its longest form (a six-byte escape,
		// or a surrogate pair) plus one byte for each character after it and the
		// closing quote. Against making room for each character, this took the
		// canonical fingerprint of the 16 KiB document of FingerprintBenchmark
		// from 144-148 µs to 124-128 µs of CPU (docs/benchmarks/jmh.md).
		out.ensure(length + 2);
		byte[] bytes = out.bytes();
		int n = out.length();
		bytes[n++] = '"';
		int end = offset + length;
		for (int i = offset; i < end; i++) {
			char c = chars[i];
			if (c < 0x80 && c >= 0x20 && c != '"' && c != '\\') {
				bytes[n++] = (byte) c;
				continue;
			}
			out.setLength(n);
			out.ensure(6 + end - i);
			if (c >= 0x80) {
				i = out.encode(c, (i + 1 < end) ? chars[i + 1] : 0, i);
			}
			else {
				escape(c);
			}
			bytes = out.bytes();
			n = out.length();
		}
		bytes[n++] = '"';
		out.setLength(n);
	}

	private void escape(char c) {
		FingerprintBuffer out = this.out;
		out.write('\\');
		switch (c) {
			case '"' -> out.write('"');
			case '\\' -> out.write('\\');
			case '\b' -> out.write('b');
			case '\t' -> out.write('t');
			case '\n' -> out.write('n');
			case '\f' -> out.write('f');
			case '\r' -> out.write('r');
			default -> {
				out.write('u');
				out.write('0');
				out.write('0');
				out.write(HEX[c >> 4]);
				out.write(HEX[c & 0xF]);
			}
		}
	}

	/**
	 * Thrown, without a stack trace, when a valid document has no canonical form.
	 */
	private static final class NotCanonicalException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		NotCanonicalException() {
			super(null, null, false, false);
		}

	}

}
