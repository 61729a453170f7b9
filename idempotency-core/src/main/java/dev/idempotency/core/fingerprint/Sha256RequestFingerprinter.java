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

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.RequestFingerprint;
import org.jspecify.annotations.Nullable;

/**
 * {@link RequestFingerprinter} that hashes the request's method, path, query, content
 * type, configured headers and body with SHA-256, canonicalising JSON bodies first.
 *
 * <h2>Framing</h2> The digest is computed over one byte stream in which every part is
 * self-delimiting, so that two different inputs never give the same stream (path
 * {@code /a} with query {@code b} differs from path {@code /ab}; an absent query differs
 * from an empty one; a header value cannot spill into the next header). With {@code u32}
 * a 4-byte big-endian unsigned integer, {@code str} a {@code u32} byte count followed by
 * the string's UTF-8 bytes (a surrogate that is not part of a pair is written as the
 * three bytes of its code unit instead of being replaced), and {@code opt} either the
 * byte {@code 0x00} (absent) or the byte {@code 0x01} followed by a {@code str}, the
 * stream is, in this order:
 * <ol>
 * <li>the 30 ASCII bytes {@code dev.idempotency.fingerprint.v1}, which name this
 * format;</li>
 * <li>{@code 'M'} {@code str}: the method, as given;</li>
 * <li>{@code 'P'} {@code str}: the path, as given;</li>
 * <li>{@code 'Q'} {@code opt}: the raw query string;</li>
 * <li>{@code 'C'} {@code opt}: the {@code Content-Type} header, as given;</li>
 * <li>{@code 'H'} {@code u32}: the number of headers, then for each header a {@code str}
 * with its name in lower case ({@link Locale#ROOT}) and a {@code str} with its value. The
 * headers are sorted by lower-case name with a stable sort, so the order of headers of
 * different names does not matter while the order of the values of one name does;</li>
 * <li>{@code 'B'}, then {@code 'J'} if the body is in canonical JSON form or {@code 'R'}
 * if it is raw, then a {@code u32} byte count and the bytes.</li>
 * </ol>
 * Changing any of this changes every fingerprint, so it is versioned by the leading name:
 * a retry that spans an upgrade to another format would be refused as a reused key.
 *
 * <h2>JSON bodies</h2> When {@link #setCanonicalizeJson(boolean) canonicalisation} is on
 * (the default), the content type is JSON ({@code application/json} or
 * {@code application/*+json}, in any case) without a {@code charset} parameter or with
 * {@code charset=utf-8}, and Jackson ({@code tools.jackson.core:jackson-core}) is on the
 * class path, the body is replaced by its canonical form: members of objects sorted by
 * name, no insignificant whitespace, strings with the fewest escapes, numbers exactly as
 * written (so {@code 1.0} and {@code 1.00} differ and no number is ever rounded), and the
 * values at the {@link #setExcludedJsonPointers(List) excluded JSON Pointers} left out.
 * Key order, whitespace and the way a string is escaped then no longer change the
 * fingerprint.
 * <p>
 * Precisely: members are sorted by comparing their unescaped names code point by code
 * point; strings and names are decoded and written as UTF-8, escaping only {@code "},
 * {@code \} and U+0000 to U+001F (as {@code \b}, {@code \t}, {@code \n}, {@code \f},
 * {@code \r}, or else <code>&#92;u00xx</code> in lower case); numbers, literals and the
 * order of array elements are kept; an excluded member disappears with its name and an
 * excluded array element disappears from its array, where pointers address the body as
 * sent (so excluding {@code /items/0} does not renumber the other elements for other
 * pointers).
 * <p>
 * The canonical form is read as UTF-8, which is how the application decodes such a body
 * too. A JSON body declared in another charset is decoded by the application with that
 * charset, where bytes that are one character in UTF-8 may be several (the bytes
 * {@code C3 A9} are one character in UTF-8, two in ISO-8859-1), so it is hashed as raw
 * bytes; the content type, with its charset, is part of the fingerprint anyway.
 * <p>
 * A body is fingerprinted as raw bytes instead, exactly as with canonicalisation off,
 * when it is empty, is not strict JSON, is not well-formed UTF-8 (overlong forms such as
 * {@code C0 AF} for {@code /}, encoded surrogates, truncated sequences, bytes that never
 * occur in UTF-8, {@code NUL}, or a leading byte order mark), has anything after its
 * first value, nests objects and arrays more than 256 levels deep, or repeats a member
 * name within one object (parsers disagree on what that means). This never fails: no body
 * makes {@link #fingerprint(FingerprintInput)} throw.
 * <p>
 * Every application instance that shares a store must compute fingerprints the same way:
 * with the same settings, and either all with Jackson or all without it, since without it
 * JSON bodies are hashed as raw bytes.
 *
 * <h2>Thread-safety</h2> Instances are thread-safe and may be shared by all requests. The
 * setters replace the settings as a whole, so each fingerprint is computed with one
 * consistent set of them; but a changed setting changes the fingerprints of requests
 * whose keys are in use, so configure the fingerprinter before its first use. Buffers and
 * digests are pooled, so the steady state allocates little more than the parser.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class Sha256RequestFingerprinter implements RequestFingerprinter {

	private static final Logger logger = Logger.getLogger(Sha256RequestFingerprinter.class.getName());

	private static final byte[] FORMAT = "dev.idempotency.fingerprint.v1".getBytes(StandardCharsets.US_ASCII);

	private static final boolean JSON_SUPPORTED = isJsonSupported();

	private static final Comparator<HttpHeader> BY_NAME = Comparator.comparing(HttpHeader::name);

	private volatile Settings settings = new Settings(true, List.of(), null);

	/**
	 * Create a fingerprinter that canonicalises JSON bodies and excludes nothing.
	 */
	public Sha256RequestFingerprinter() {
	}

	private static boolean isJsonSupported() {
		ClassLoader classLoader = Sha256RequestFingerprinter.class.getClassLoader();
		try {
			Class.forName("tools.jackson.core.json.JsonFactory", false, classLoader);
		}
		catch (ClassNotFoundException | LinkageError ex) {
			logger.info("Jackson (tools.jackson.core:jackson-core) is not on the class path: "
					+ "JSON request bodies are fingerprinted as raw bytes");
			return false;
		}
		try {
			JsonCanonicalizer.verify();
			return true;
		}
		catch (LinkageError | RuntimeException ex) {
			logger.log(Level.WARNING, "The Jackson on the class path cannot be used to canonicalise JSON: "
					+ "JSON request bodies are fingerprinted as raw bytes", ex);
			return false;
		}
	}

	/**
	 * Whether JSON bodies can be canonicalised here, which needs Jackson
	 * ({@code tools.jackson.core:jackson-core}) on the class path. Without it every body
	 * is fingerprinted as raw bytes, whatever the settings.
	 * @return {@code true} if JSON canonicalisation is available
	 */
	public static boolean isJsonCanonicalizationAvailable() {
		return JSON_SUPPORTED;
	}

	/**
	 * Set whether JSON bodies are canonicalised before hashing. Turn it off to
	 * fingerprint bodies as the raw bytes received, for instance when the application
	 * gives meaning to the order of members. Default is {@code true}.
	 * @param canonicalizeJson whether to canonicalise JSON bodies
	 */
	public synchronized void setCanonicalizeJson(boolean canonicalizeJson) {
		Settings current = this.settings;
		this.settings = new Settings(canonicalizeJson, current.excludedJsonPointers(), current.exclusions());
	}

	/**
	 * Return whether JSON bodies are canonicalised before hashing.
	 * @return whether JSON canonicalisation is on
	 * @see #isJsonCanonicalizationAvailable()
	 */
	public boolean isCanonicalizeJson() {
		return this.settings.canonicalizeJson();
	}

	/**
	 * Set the JSON Pointers (RFC 6901) of volatile values, such as a client timestamp,
	 * that are left out of the fingerprint of a canonicalised JSON body: changing them
	 * does not change the fingerprint, while their presence does not matter either.
	 * Pointers are resolved against the body as sent; {@code /items/0/clientRef} names
	 * the {@code clientRef} member of the first element of the {@code items} array, and
	 * {@code ~1} and {@code ~0} stand for {@code /} and {@code ~} in a member name. A
	 * pointer to a location that a body does not have leaves that body unchanged. Raw
	 * bodies are hashed whole. Default is none.
	 * @param excludedJsonPointers the pointers, never {@code null}; copied
	 * @throws IllegalArgumentException if an element is {@code null}, not a valid JSON
	 * Pointer, or the empty pointer (the whole body)
	 */
	public synchronized void setExcludedJsonPointers(List<String> excludedJsonPointers) {
		Objects.requireNonNull(excludedJsonPointers, "'excludedJsonPointers' must not be null");
		// one copy, validated and compiled before anything changes
		List<String> copy = new ArrayList<>(excludedJsonPointers);
		JsonPointerTree exclusions = JsonPointerTree.compile(copy);
		List<String> pointers = List.copyOf(copy);
		Settings current = this.settings;
		this.settings = new Settings(current.canonicalizeJson(), pointers, exclusions);
	}

	/**
	 * Return the JSON Pointers whose values are left out of canonicalised JSON bodies.
	 * @return the pointers, never {@code null}; unmodifiable
	 */
	public List<String> getExcludedJsonPointers() {
		return this.settings.excludedJsonPointers();
	}

	/**
	 * Compute the fingerprint of the given request.
	 * <p>
	 * Never fails for any body and does not change the position of the input's body
	 * buffer.
	 * @param input the request's parts, never {@code null}
	 * @return the fingerprint, never {@code null}
	 */
	@Override
	public RequestFingerprint fingerprint(FingerprintInput input) {
		Objects.requireNonNull(input, "'input' must not be null");
		Settings settings = this.settings;
		FingerprintWorkspace workspace = FingerprintWorkspace.acquire();
		try {
			FingerprintBuffer frame = workspace.frame;
			frame.reset();
			frame.write(FORMAT, 0, FORMAT.length);
			frame.write('M');
			frame.writeLengthPrefixed(input.method());
			frame.write('P');
			frame.writeLengthPrefixed(input.path());
			frame.write('Q');
			writeOptional(frame, input.query());
			frame.write('C');
			writeOptional(frame, input.contentType());
			frame.write('H');
			writeHeaders(frame, input.headers());
			frame.write('B');
			MessageDigest digest = workspace.digest;
			ByteBuffer body = input.body();
			int length = body.remaining();
			if (length > 0 && settings.canonicalizeJson() && JSON_SUPPORTED && isUtf8Json(input.contentType())) {
				byte[] bytes = workspace.body(length);
				// absolute bulk get: the caller's buffer position stays where it is
				body.get(body.position(), bytes, 0, length);
				if (canonicalize(workspace, bytes, length, settings.exclusions())) {
					FingerprintBuffer json = workspace.json;
					frame.write('J');
					frame.writeInt(json.length());
					digest.update(frame.bytes(), 0, frame.length());
					digest.update(json.bytes(), 0, json.length());
				}
				else {
					frame.write('R');
					frame.writeInt(length);
					digest.update(frame.bytes(), 0, frame.length());
					digest.update(bytes, 0, length);
				}
			}
			else {
				frame.write('R');
				frame.writeInt(length);
				digest.update(frame.bytes(), 0, frame.length());
				digest.update(body.duplicate());
			}
			return workspace.finishDigest();
		}
		finally {
			FingerprintWorkspace.release(workspace);
		}
	}

	private static boolean canonicalize(FingerprintWorkspace workspace, byte[] body, int length,
			@Nullable JsonPointerTree exclusions) {
		try {
			return JsonCanonicalizer.canonicalize(workspace, body, length, exclusions);
		}
		catch (RuntimeException | StackOverflowError ex) {
			// never expected; whatever goes wrong,
			// the raw bytes still give a sound fingerprint
			logger.log(Level.FINE, "JSON body not canonicalised", ex);
			return false;
		}
	}

	private static void writeOptional(FingerprintBuffer frame, @Nullable String value) {
		if (value == null) {
			frame.write(0);
		}
		else {
			frame.write(1);
			frame.writeLengthPrefixed(value);
		}
	}

	private static void writeHeaders(FingerprintBuffer frame, List<HttpHeader> headers) {
		int count = headers.size();
		frame.writeInt(count);
		if (count == 0) {
			return;
		}
		HttpHeader[] sorted = new HttpHeader[count];
		for (int i = 0; i < count; i++) {
			HttpHeader header = headers.get(i);
			sorted[i] = new HttpHeader(header.name().toLowerCase(Locale.ROOT), header.value());
		}
		// the sort is stable, so the values of one name keep the order they were sent in
		Arrays.sort(sorted, BY_NAME);
		for (HttpHeader header : sorted) {
			frame.writeLengthPrefixed(header.name());
			frame.writeLengthPrefixed(header.value());
		}
	}

	/**
	 * Whether a content type is {@code application/json} or {@code application/*+json},
	 * ignoring case and parameters.
	 * @param contentType the content type or {@code null}
	 * @return {@code true} for a JSON content type
	 */
	static boolean isJson(@Nullable String contentType) {
		if (contentType == null) {
			return false;
		}
		int length = contentType.length();
		int start = 0;
		while (start < length && isWhitespace(contentType.charAt(start))) {
			start++;
		}
		if (!contentType.regionMatches(true, start, "application/", 0, 12)) {
			return false;
		}
		int subtype = start + 12;
		int end = subtype;
		while (end < length && contentType.charAt(end) != ';' && !isWhitespace(contentType.charAt(end))) {
			end++;
		}
		int subtypeLength = end - subtype;
		return (subtypeLength == 4 && contentType.regionMatches(true, subtype, "json", 0, 4))
				|| (subtypeLength > 5 && contentType.regionMatches(true, end - 5, "+json", 0, 5));
	}

	/**
	 * Whether a content type is JSON ({@link #isJson(String)}) that Spring's JSON
	 * converter decodes as UTF-8: without a {@code charset} parameter, or with
	 * {@code charset=utf-8} (in any case, quoted or not). With another charset the
	 * handler sees characters that the canonical form, which is read as UTF-8, would not
	 * tell apart, so such a body is hashed raw; so is one with parameters that do not
	 * parse.
	 * @param contentType the content type or {@code null}
	 * @return {@code true} for JSON decoded as UTF-8
	 */
	static boolean isUtf8Json(@Nullable String contentType) {
		return isJson(contentType) && declaresUtf8OrNoCharset(contentType);
	}

	private static boolean declaresUtf8OrNoCharset(String contentType) {
		int length = contentType.length();
		int i = contentType.indexOf(';');
		if (i < 0) {
			return true;
		}
		while (i < length) {
			// at a ';': a parameter follows, name '=' (token | quoted-string)
			int nameStart = skipWhitespace(contentType, i + 1);
			int nameEnd = nameStart;
			while (nameEnd < length && contentType.charAt(nameEnd) != '=' && contentType.charAt(nameEnd) != ';') {
				nameEnd++;
			}
			if (nameEnd == length || contentType.charAt(nameEnd) == ';') {
				// nothing but whitespace is an empty parameter;
				// a name without a value is malformed
				if (skipWhitespace(contentType, nameStart) != nameEnd) {
					return false;
				}
				i = nameEnd;
				continue;
			}
			boolean charset = isCharsetName(contentType, nameStart, nameEnd);
			int valueStart = skipWhitespace(contentType, nameEnd + 1);
			int valueEnd;
			int next;
			if (valueStart < length && contentType.charAt(valueStart) == '"') {
				int end = valueStart + 1;
				while (end < length && contentType.charAt(end) != '"') {
					end += (contentType.charAt(end) == '\\') ? 2 : 1;
				}
				if (end >= length) {
					return false;
				}
				valueStart++;
				valueEnd = end;
				next = skipWhitespace(contentType, end + 1);
				if (next < length && contentType.charAt(next) != ';') {
					return false;
				}
			}
			else {
				next = valueStart;
				while (next < length && contentType.charAt(next) != ';') {
					next++;
				}
				valueEnd = next;
				while (valueEnd > valueStart && isWhitespace(contentType.charAt(valueEnd - 1))) {
					valueEnd--;
				}
			}
			if (charset
					&& !(valueEnd - valueStart == 5 && contentType.regionMatches(true, valueStart, "utf-8", 0, 5))) {
				return false;
			}
			i = next;
		}
		return true;
	}

	private static boolean isCharsetName(String contentType, int start, int end) {
		int nameEnd = end;
		while (nameEnd > start && isWhitespace(contentType.charAt(nameEnd - 1))) {
			nameEnd--;
		}
		return nameEnd - start == 7 && contentType.regionMatches(true, start, "charset", 0, 7);
	}

	private static int skipWhitespace(String text, int from) {
		int i = from;
		while (i < text.length() && isWhitespace(text.charAt(i))) {
			i++;
		}
		return i;
	}

	private static boolean isWhitespace(char c) {
		return c == ' ' || c == '\t';
	}

	@Override
	public String toString() {
		Settings settings = this.settings;
		return "Sha256RequestFingerprinter[canonicalizeJson=" + settings.canonicalizeJson() + ", excludedJsonPointers="
				+ settings.excludedJsonPointers() + "]";
	}

	/**
	 * One consistent set of settings, replaced as a whole by the setters.
	 */
	private record Settings(boolean canonicalizeJson, List<String> excludedJsonPointers,
			@Nullable JsonPointerTree exclusions) {

	}

}
