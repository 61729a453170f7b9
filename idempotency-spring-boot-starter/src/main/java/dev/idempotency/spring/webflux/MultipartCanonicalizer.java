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

package dev.idempotency.spring.webflux;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.idempotency.spring.http.FormCanonicalizer;
import org.jspecify.annotations.Nullable;

import org.springframework.http.ContentDisposition;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;

/**
 * The fingerprint form of a {@code multipart/form-data} body: its parts, each by its
 * name, file name, content type, other headers and bytes, in their order, without the
 * boundary, which a client picks anew each time it builds a request. Two bodies have the
 * same form when a handler that reads their parts cannot tell them apart, whatever their
 * boundaries and however their {@code Content-Disposition} headers quote the names.
 * <p>
 * Only a strictly well-formed body has this form: it starts with its first delimiter (no
 * preamble), every delimiter line is the boundary alone, header lines are
 * {@code Name: value} in UTF-8 (as WebFlux's multipart reader decodes them) without
 * continuation lines, every part is {@code form-data} with a name, and nothing but a line
 * break follows the close delimiter. Anything else may be read differently by the parsers
 * of the handler's side and is fingerprinted as its raw bytes, boundary included.
 *
 * @author Idempotency contributors
 */
final class MultipartCanonicalizer {

	private static final byte[] CRLF = { '\r', '\n' };

	private static final byte[] MARK = "multipart/form-data parts\n".getBytes(StandardCharsets.US_ASCII);

	private MultipartCanonicalizer() {
	}

	/**
	 * Return whether a content type may be {@code multipart/form-data}, without
	 * allocating for any other type.
	 * @param contentType the content type or {@code null}
	 * @return {@code true} for a multipart form
	 */
	static boolean isMultipartForm(@Nullable String contentType) {
		return contentType != null && contentType.regionMatches(true, 0, "multipart/", 0, 10)
				&& FormCanonicalizer.isMultipartForm(contentType);
	}

	/**
	 * Return the content type that takes part in the fingerprint of a body canonicalized
	 * by {@link #canonicalize}: the request's, without its boundary.
	 * @param contentType the request's content type
	 * @return the content type without the boundary parameter
	 */
	static String contentTypeWithoutBoundary(String contentType) {
		MediaType type = MediaType.parseMediaType(contentType);
		Map<String, String> parameters = new LinkedHashMap<>(type.getParameters());
		parameters.keySet().removeIf((name) -> name.equalsIgnoreCase("boundary"));
		return new MediaType(type.getType().toLowerCase(Locale.ROOT), type.getSubtype().toLowerCase(Locale.ROOT),
				parameters)
			.toString();
	}

	/**
	 * Return the canonical form of a multipart body, or {@code null} if the body is not
	 * strictly well-formed (or the content type names no boundary).
	 * @param contentType the request's content type
	 * @param body the body
	 * @return the canonical form, or {@code null}
	 */
	static byte @Nullable [] canonicalize(String contentType, byte[] body) {
		byte[] boundary = boundary(contentType);
		if (boundary == null) {
			return null;
		}
		byte[] delimiter = concat(CRLF, "--".getBytes(StandardCharsets.US_ASCII), boundary);
		// the first delimiter has no line break before it
		int position = delimiter.length - 2;
		if (!startsWith(body, 0, delimiter, 2)) {
			return null;
		}
		ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 64);
		out.writeBytes(MARK);
		while (true) {
			if (startsWith(body, position, new byte[] { '-', '-' }, 0)) {
				// the close delimiter: nothing but a line break after it
				int rest = body.length - position - 2;
				return (rest == 0 || (rest == 2 && startsWith(body, position + 2, CRLF, 0))) ? out.toByteArray() : null;
			}
			if (!startsWith(body, position, CRLF, 0)) {
				return null;
			}
			int headersStart = position + 2;
			int next = indexOf(body, delimiter, headersStart);
			if (next < 0) {
				return null;
			}
			if (!part(body, headersStart, next, out)) {
				return null;
			}
			position = next + delimiter.length;
		}
	}

	// one part, from its first header line to the line break before the next delimiter
	private static boolean part(byte[] body, int start, int end, ByteArrayOutputStream out) {
		int headersEnd;
		int contentStart;
		if (startsWith(body, start, CRLF, 0)) {
			// no headers
			headersEnd = start;
			contentStart = start + 2;
		}
		else {
			int blank = indexOf(body, new byte[] { '\r', '\n', '\r', '\n' }, start);
			if (blank < 0 || blank + 4 > end) {
				return false;
			}
			headersEnd = blank;
			contentStart = blank + 4;
		}
		String headerText = utf8(body, start, headersEnd);
		if (headerText == null) {
			return false;
		}
		String disposition = null;
		String contentType = null;
		List<String[]> others = new ArrayList<>();
		if (!headerText.isEmpty()) {
			for (String line : headerText.split("\r\n", -1)) {
				int colon = line.indexOf(':');
				if (colon <= 0 || !isToken(line, colon) || line.indexOf('\r') >= 0 || line.indexOf('\n') >= 0) {
					return false;
				}
				String name = line.substring(0, colon).toLowerCase(Locale.ROOT);
				String value = line.substring(colon + 1).strip();
				if (name.equals("content-disposition")) {
					if (disposition != null) {
						return false;
					}
					disposition = value;
				}
				else if (name.equals("content-type")) {
					if (contentType != null) {
						return false;
					}
					contentType = value;
				}
				else {
					others.add(new String[] { name, value });
				}
			}
		}
		if (disposition == null) {
			return false;
		}
		ContentDisposition parsed;
		try {
			parsed = ContentDisposition.parse(disposition);
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
		if (!parsed.isFormData() || parsed.getName() == null) {
			return false;
		}
		field(out, parsed.getName());
		field(out, parsed.getFilename());
		field(out, contentType);
		// the other headers by name, the values of one name in their order
		others.sort(Comparator.comparing((header) -> header[0]));
		writeInt(out, others.size());
		for (String[] header : others) {
			field(out, header[0]);
			field(out, header[1]);
		}
		writeInt(out, end - contentStart);
		out.write(body, contentStart, end - contentStart);
		return true;
	}

	private static boolean isToken(String line, int end) {
		for (int i = 0; i < end; i++) {
			char c = line.charAt(i);
			if (c <= ' ' || c >= 0x7F || "()<>@,;:\\\"/[]?={}".indexOf(c) >= 0) {
				return false;
			}
		}
		return true;
	}

	private static byte @Nullable [] boundary(String contentType) {
		String boundary;
		try {
			boundary = MediaType.parseMediaType(contentType).getParameter("boundary");
		}
		catch (InvalidMediaTypeException ex) {
			return null;
		}
		if (boundary == null) {
			return null;
		}
		int length = boundary.length();
		if (length > 2 && boundary.charAt(0) == '"' && boundary.charAt(length - 1) == '"') {
			boundary = boundary.substring(1, length - 1);
		}
		return boundary.isEmpty() ? null : boundary.getBytes(StandardCharsets.UTF_8);
	}

	private static @Nullable String utf8(byte[] body, int from, int to) {
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(body, from, to - from))
				.toString();
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

	// a field that may be absent: its length (-1 when absent), then its UTF-8 bytes
	private static void field(ByteArrayOutputStream out, @Nullable String value) {
		if (value == null) {
			writeInt(out, -1);
			return;
		}
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		writeInt(out, bytes.length);
		out.writeBytes(bytes);
	}

	private static void writeInt(ByteArrayOutputStream out, int value) {
		out.write(value >>> 24);
		out.write(value >>> 16);
		out.write(value >>> 8);
		out.write(value);
	}

	private static boolean startsWith(byte[] data, int at, byte[] prefix, int prefixFrom) {
		int length = prefix.length - prefixFrom;
		return at >= 0 && at + length <= data.length
				&& Arrays.equals(data, at, at + length, prefix, prefixFrom, prefix.length);
	}

	private static int indexOf(byte[] data, byte[] pattern, int from) {
		int last = data.length - pattern.length;
		for (int i = from; i <= last; i++) {
			if (data[i] == pattern[0] && Arrays.equals(data, i, i + pattern.length, pattern, 0, pattern.length)) {
				return i;
			}
		}
		return -1;
	}

	private static byte[] concat(byte[]... parts) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (byte[] part : parts) {
			out.writeBytes(part);
		}
		return out.toByteArray();
	}

}
