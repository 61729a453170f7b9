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

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The form that {@code application/x-www-form-urlencoded} bodies are fingerprinted in:
 * their decoded parameters, so that a body that a filter before the idempotency filter
 * has already consumed (Spring Security's CSRF check reads {@code _csrf}, which makes the
 * container parse the body; {@code FormContentFilter} parses the bodies of form
 * {@code PUT}, {@code PATCH} and {@code DELETE} requests) gets the fingerprint it would
 * have had if it had been read by the idempotency filter.
 * <p>
 * The parameters are those of the servlet API's parameter map, query parameters included
 * (for each name the query's values come first, then the body's), since that is all a
 * consumed body leaves. Their canonical form is an
 * {@code application/x-www-form-urlencoded} string: names sorted by their encoded form,
 * the values of a name in order, each written as {@code name=value}, or {@code name}
 * alone for a parameter without a value, joined by {@code &}, with every character other
 * than {@code A-Z a-z 0-9 - . _ ~} written as the percent-encoded bytes of its UTF-8 form
 * (a surrogate that is not part of a pair as the three bytes of its code unit). So two
 * forms have the same canonical form exactly when they have the same parameters.
 * <p>
 * A body that is still there is parsed strictly: when it is not a plain sequence of
 * {@code name=value} pairs of printable ASCII with valid percent-escapes that decode in
 * the request's charset, servlet containers and Spring's form reader may disagree on its
 * parameters, and it is fingerprinted as raw bytes instead.
 * <p>
 * Spring Security's CSRF token is no business data, and its default request handlers mask
 * it anew for every page they render: the parameter that carries it is left out of the
 * fingerprint ({@link #csrfParameterName(Object)}, {@link #without(Map, String)}). Only a
 * form with a {@value #CSRF_PARAMETER} parameter asks the request's token for its name,
 * so that the token of a request that the CSRF check skipped is not loaded (and
 * generated, with a session or a cookie) for nothing.
 *
 * @author Idempotency contributors
 */
public final class FormCanonicalizer {

	/**
	 * The name of the parameter in which Spring Security's CSRF token repositories expect
	 * the token by default.
	 */
	public static final String CSRF_PARAMETER = "_csrf";

	private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

	// Spring Security's CsrfToken of the servlet stack and of the reactive one
	private static final String[] CSRF_TOKEN_TYPES = { "org.springframework.security.web.csrf.CsrfToken",
			"org.springframework.security.web.server.csrf.CsrfToken" };

	// the getParameterName() of a CsrfToken class, by the public interface that declares
	// it
	private static final ClassValue<Optional<Method>> CSRF_PARAMETER_NAME = new ClassValue<>() {

		@Override
		protected Optional<Method> computeValue(Class<?> type) {
			for (String name : CSRF_TOKEN_TYPES) {
				try {
					Class<?> tokenType = Class.forName(name, false, type.getClassLoader());
					if (tokenType.isAssignableFrom(type)) {
						return Optional.of(tokenType.getMethod("getParameterName"));
					}
				}
				catch (ReflectiveOperationException | LinkageError ex) {
					// not this one
				}
			}
			return Optional.empty();
		}

	};

	private FormCanonicalizer() {
	}

	/**
	 * Whether a content type is {@code application/x-www-form-urlencoded}, in any case
	 * and with any parameters.
	 * @param contentType the content type or {@code null}
	 * @return {@code true} for a form
	 */
	public static boolean isForm(@Nullable String contentType) {
		return hasMediaType(contentType, "application/x-www-form-urlencoded");
	}

	/**
	 * Whether a content type is {@code multipart/form-data}, in any case and with any
	 * parameters.
	 * @param contentType the content type or {@code null}
	 * @return {@code true} for a multipart form
	 */
	public static boolean isMultipartForm(@Nullable String contentType) {
		return hasMediaType(contentType, "multipart/form-data");
	}

	private static boolean hasMediaType(@Nullable String contentType, String mediaType) {
		if (contentType == null) {
			return false;
		}
		int end = contentType.indexOf(';');
		String type = ((end >= 0) ? contentType.substring(0, end) : contentType).strip();
		return type.equalsIgnoreCase(mediaType);
	}

	/**
	 * Parse a form body strictly: every pair is {@code name=value} with a non-empty name,
	 * made of printable ASCII ({@code 0x21}-{@code 0x7E}) in which {@code %} starts a
	 * two-digit escape and {@code +} stands for a space, and whose bytes decode in the
	 * given charset without error.
	 * @param body the body
	 * @param charset the charset of the decoded bytes
	 * @return the parameters in the order of the body, or {@code null} if the body is not
	 * a strictly well-formed form
	 */
	public static @Nullable Map<String, List<String>> parseStrictly(byte[] body, Charset charset) {
		Map<String, List<String>> form = new LinkedHashMap<>();
		if (body.length == 0) {
			return form;
		}
		int start = 0;
		while (true) {
			int end = indexOf(body, '&', start, body.length);
			int equals = indexOf(body, '=', start, end);
			if (equals == end || equals == start) {
				// no value, an empty name, or an empty pair (a stray or trailing '&')
				return null;
			}
			String name = decode(body, start, equals, charset);
			String value = decode(body, equals + 1, end, charset);
			if (name == null || value == null) {
				return null;
			}
			form.computeIfAbsent(name, (key) -> new ArrayList<>()).add(value);
			if (end == body.length) {
				return form;
			}
			start = end + 1;
		}
	}

	/**
	 * Return the charset of a request's body, as the servlet specification reads a form
	 * body in it.
	 * @param encoding the request's character encoding, or {@code null}
	 * @return the charset it names, or ISO-8859-1 when it names none or an unsupported
	 * one
	 */
	public static Charset charset(@Nullable String encoding) {
		return charset(encoding, StandardCharsets.ISO_8859_1);
	}

	/**
	 * Return the charset of a request's body, or the given default when the request names
	 * none or an unsupported one: the default charset of the form reader of the stack,
	 * such as UTF-8 for Spring WebFlux's.
	 * @param encoding the request's character encoding, or {@code null}
	 * @param defaultCharset the charset of a body whose request names none
	 * @return the charset it names, or the default
	 */
	public static Charset charset(@Nullable String encoding, Charset defaultCharset) {
		if (encoding != null) {
			try {
				return Charset.forName(encoding);
			}
			catch (IllegalArgumentException ex) {
				// unsupported: fall back to the default
			}
		}
		return defaultCharset;
	}

	/**
	 * Parse a form body as servlet containers do for the request's parameters: a pair
	 * without {@code =} is a name with an empty value, and a malformed pair is skipped.
	 * @param body the body
	 * @param charset the charset of the decoded bytes
	 * @return the parameters in the order of the body
	 */
	public static Map<String, List<String>> parseLeniently(byte[] body, Charset charset) {
		Map<String, List<String>> form = new LinkedHashMap<>();
		String text = new String(body, StandardCharsets.ISO_8859_1);
		for (String pair : text.split("&")) {
			if (pair.isEmpty()) {
				continue;
			}
			int equals = pair.indexOf('=');
			String name = (equals >= 0) ? pair.substring(0, equals) : pair;
			String value = (equals >= 0) ? pair.substring(equals + 1) : "";
			try {
				String decodedName = decodeLeniently(name, charset);
				String decodedValue = decodeLeniently(value, charset);
				form.computeIfAbsent(decodedName, (key) -> new ArrayList<>()).add(decodedValue);
			}
			catch (IllegalArgumentException ex) {
				// a malformed pair is skipped, as containers do
			}
		}
		return form;
	}

	private static String decodeLeniently(String value, Charset charset) {
		// the body was read as ISO-8859-1 so that every byte maps to one char: re-encode
		// raw bytes outside the %-escapes in the request's charset
		String decoded = URLDecoder.decode(value, StandardCharsets.ISO_8859_1);
		return new String(decoded.getBytes(StandardCharsets.ISO_8859_1), charset);
	}

	/**
	 * Return the parameters of a request whose form body was read: the query's parameters
	 * followed by the form's.
	 * @param query the parameters of the query string
	 * @param form the parameters of the body
	 * @return the merged parameters, unmodifiable
	 */
	public static Map<String, String[]> merge(Map<String, String[]> query, Map<String, List<String>> form) {
		Map<String, String[]> merged = new LinkedHashMap<>(query);
		form.forEach((name, values) -> {
			String[] existing = merged.get(name);
			List<String> all = new ArrayList<>();
			if (existing != null) {
				all.addAll(Arrays.asList(existing));
			}
			all.addAll(values);
			merged.put(name, all.toArray(new String[0]));
		});
		return Collections.unmodifiableMap(merged);
	}

	/**
	 * Return the name of the parameter that carries a Spring Security {@code CsrfToken}
	 * (of the servlet stack, {@code org.springframework.security.web.csrf.CsrfToken}, or
	 * of the reactive one,
	 * {@code org.springframework.security.web.server.csrf.CsrfToken}), as its
	 * {@code getParameterName()} gives it. A deferred token is loaded by this (the CSRF
	 * check has loaded it already for a request that it checked).
	 * @param csrfToken the token, or {@code null}
	 * @return the parameter's name, or {@code null} if {@code csrfToken} is no such token
	 * or cannot tell
	 */
	public static @Nullable String csrfParameterName(@Nullable Object csrfToken) {
		if (csrfToken == null) {
			return null;
		}
		Method parameterName = CSRF_PARAMETER_NAME.get(csrfToken.getClass()).orElse(null);
		if (parameterName == null) {
			return null;
		}
		try {
			return (parameterName.invoke(csrfToken) instanceof String name) ? name : null;
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			return null;
		}
	}

	/**
	 * Return the parameters without those of one name.
	 * @param parameters the parameters
	 * @param name the name to leave out, or {@code null} for none
	 * @return the parameters without {@code name}: {@code parameters} itself when it has
	 * none of that name
	 */
	public static Map<String, String[]> without(Map<String, String[]> parameters, @Nullable String name) {
		if (name == null || !parameters.containsKey(name)) {
			return parameters;
		}
		Map<String, String[]> rest = new LinkedHashMap<>(parameters);
		rest.remove(name);
		return rest;
	}

	private static int indexOf(byte[] bytes, char c, int from, int to) {
		for (int i = from; i < to; i++) {
			if (bytes[i] == c) {
				return i;
			}
		}
		return to;
	}

	private static @Nullable String decode(byte[] body, int from, int to, Charset charset) {
		byte[] decoded = new byte[to - from];
		int length = 0;
		for (int i = from; i < to; i++) {
			int b = body[i];
			if (b == '%') {
				int high = (i + 2 < to) ? Character.digit(body[i + 1], 16) : -1;
				int low = (high >= 0) ? Character.digit(body[i + 2], 16) : -1;
				if (low < 0) {
					return null;
				}
				decoded[length++] = (byte) ((high << 4) | low);
				i += 2;
			}
			else if (b == '+') {
				decoded[length++] = ' ';
			}
			else if (b >= 0x21 && b <= 0x7E) {
				decoded[length++] = (byte) b;
			}
			else {
				return null;
			}
		}
		try {
			return charset.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(decoded, 0, length))
				.toString();
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

	/**
	 * Return the canonical form of the given parameters.
	 * @param parameters the parameters; a value may be {@code null} (a name without
	 * {@code =}, as Spring's form reader gives it)
	 * @return the canonical form as ASCII bytes
	 */
	public static byte[] canonicalize(Map<String, String[]> parameters) {
		String[][] entries = new String[parameters.size()][];
		int count = 0;
		for (Map.Entry<String, String[]> entry : parameters.entrySet()) {
			String[] values = (entry.getValue() != null) ? entry.getValue() : new String[0];
			String[] encoded = new String[values.length + 1];
			encoded[0] = encode(entry.getKey());
			for (int i = 0; i < values.length; i++) {
				encoded[i + 1] = (values[i] != null) ? encode(values[i]) : null;
			}
			entries[count++] = encoded;
		}
		Arrays.sort(entries, 0, count, (first, second) -> first[0].compareTo(second[0]));
		StringBuilder form = new StringBuilder();
		for (int i = 0; i < count; i++) {
			String[] entry = entries[i];
			for (int value = 1; value < entry.length; value++) {
				if (!form.isEmpty()) {
					form.append('&');
				}
				form.append(entry[0]);
				if (entry[value] != null) {
					form.append('=').append(entry[value]);
				}
			}
		}
		return form.toString().getBytes(StandardCharsets.US_ASCII);
	}

	private static String encode(String text) {
		ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
					|| c == '_' || c == '~') {
				out.write(c);
				continue;
			}
			int codePoint = c;
			if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
				codePoint = Character.toCodePoint(c, text.charAt(++i));
			}
			if (codePoint < 0x80) {
				escape(out, codePoint);
			}
			else if (codePoint < 0x800) {
				escape(out, 0xC0 | (codePoint >> 6));
				escape(out, 0x80 | (codePoint & 0x3F));
			}
			else if (codePoint < 0x10000) {
				escape(out, 0xE0 | (codePoint >> 12));
				escape(out, 0x80 | ((codePoint >> 6) & 0x3F));
				escape(out, 0x80 | (codePoint & 0x3F));
			}
			else {
				escape(out, 0xF0 | (codePoint >> 18));
				escape(out, 0x80 | ((codePoint >> 12) & 0x3F));
				escape(out, 0x80 | ((codePoint >> 6) & 0x3F));
				escape(out, 0x80 | (codePoint & 0x3F));
			}
		}
		return out.toString(StandardCharsets.US_ASCII);
	}

	private static void escape(ByteArrayOutputStream out, int b) {
		out.write('%');
		out.write(HEX[b >> 4]);
		out.write(HEX[b & 0xF]);
	}

	/**
	 * Return a number of characters that the body of a request with the given parameters
	 * had at least: every decoded character comes from one byte or more, and the query
	 * string holds at most as many characters of its parameters as it is long.
	 * @param parameters the parameters of the request, query parameters included
	 * @param query the raw query string or {@code null}
	 * @return the smallest possible length of the body, in bytes
	 */
	public static long minimumBodyLength(Map<String, String[]> parameters, @Nullable String query) {
		long length = 0;
		for (Map.Entry<String, String[]> entry : parameters.entrySet()) {
			String[] values = (entry.getValue() != null) ? entry.getValue() : new String[0];
			for (String value : values) {
				length += entry.getKey().length() + ((value != null) ? value.length() : 0);
			}
		}
		return length - ((query != null) ? query.length() : 0);
	}

}
