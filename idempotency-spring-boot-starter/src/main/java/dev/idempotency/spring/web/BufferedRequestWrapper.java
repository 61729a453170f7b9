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

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.fingerprint.FingerprintInput;
import dev.idempotency.spring.http.FormCanonicalizer;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.jspecify.annotations.Nullable;

/**
 * Request whose body has been read into memory before the handler runs, so that it can be
 * fingerprinted and then read again by the handler through {@link #getInputStream()},
 * {@link #getReader()} or, for {@code application/x-www-form-urlencoded} posts, the
 * parameter methods.
 * <p>
 * A form body is fingerprinted by its parameters ({@link FormCanonicalizer}), also when a
 * filter before this one has already consumed it: the handler then reads the parameters
 * the container or that filter parsed, and an empty body.
 *
 * @author Idempotency contributors
 */
final class BufferedRequestWrapper extends HttpServletRequestWrapper {

	private static final byte[] EMPTY = new byte[0];

	private static final int INITIAL_CHUNKED_CAPACITY = 8192;

	// the request attribute in which Spring Security's CsrfFilter puts the CsrfToken
	private static final String CSRF_TOKEN_ATTRIBUTE = "org.springframework.security.web.csrf.CsrfToken";

	private final byte[] body;

	private final byte[] fingerprintBody;

	private @Nullable BodyInputStream inputStream;

	private @Nullable BufferedReader reader;

	private @Nullable Map<String, String[]> parameters;

	private BufferedRequestWrapper(HttpServletRequest request, byte[] body, byte[] fingerprintBody) {
		super(request);
		this.body = body;
		this.fingerprintBody = fingerprintBody;
	}

	/**
	 * Read the body of a request.
	 * <p>
	 * A form body ({@code application/x-www-form-urlencoded}) that yields no bytes
	 * although it has a {@code Content-Length}, or that yields none without one, may have
	 * been consumed by the container's parameter parsing, which a filter before this one
	 * started (Spring Security's CSRF check reads the {@code _csrf} parameter) or by
	 * {@code FormContentFilter}: its parameters are taken from the request then. A
	 * {@code multipart/form-data} body that yields no bytes cannot be fingerprinted.
	 * @param request the request
	 * @param maxBody largest body accepted, in bytes
	 * @return the wrapper, or {@code null} if the body is larger than {@code maxBody}
	 * (nothing or only part of it has been read then) or, for a consumed form body, its
	 * parameters alone are longer than that
	 * @throws IOException if reading fails, the body is shorter than its
	 * {@code Content-Length}, or a body that cannot be fingerprinted from the parameters
	 * was consumed before
	 */
	static @Nullable BufferedRequestWrapper read(HttpServletRequest request, int maxBody) throws IOException {
		long contentLength = request.getContentLengthLong();
		if (contentLength > maxBody) {
			return null;
		}
		String contentType = request.getContentType();
		boolean form = FormCanonicalizer.isForm(contentType);
		byte[] body = (contentLength == 0) ? EMPTY : readBody(request.getInputStream(), contentLength, maxBody, form);
		if (body == null) {
			return null;
		}
		if (!form) {
			if (body.length == 0 && contentLength < 0 && FormCanonicalizer.isMultipartForm(contentType)) {
				// a multipart body is never empty: this one was read by a filter before
				throw new IOException("The multipart/form-data body is empty or was read by a filter that runs "
						+ "before the idempotency filter, so it cannot be fingerprinted");
			}
			return new BufferedRequestWrapper(request, body, body);
		}
		if (body.length == 0) {
			// consumed, or really empty: either way the request's parameters are the form
			Map<String, String[]> parameters = request.getParameterMap();
			if (FormCanonicalizer.minimumBodyLength(parameters, request.getQueryString()) > maxBody) {
				return null;
			}
			return new BufferedRequestWrapper(request, EMPTY,
					FormCanonicalizer.canonicalize(withoutCsrfToken(parameters, request)));
		}
		Map<String, List<String>> bodyParameters = FormCanonicalizer.parseStrictly(body,
				FormCanonicalizer.charset(request.getCharacterEncoding()));
		if (bodyParameters == null) {
			return new BufferedRequestWrapper(request, body, body);
		}
		// the body has been read, so the container's parameters are the query's
		Map<String, String[]> parameters = FormCanonicalizer.merge(request.getParameterMap(), bodyParameters);
		return new BufferedRequestWrapper(request, body,
				FormCanonicalizer.canonicalize(withoutCsrfToken(parameters, request)));
	}

	// Spring Security's CSRF token is no business data, and its check, which runs first,
	// has checked it: a form is fingerprinted without it, whether it was sent as a new
	// masking of the session's token, a token of another session, or in the header
	private static Map<String, String[]> withoutCsrfToken(Map<String, String[]> parameters,
			HttpServletRequest request) {
		if (!parameters.containsKey(FormCanonicalizer.CSRF_PARAMETER)) {
			return parameters;
		}
		return FormCanonicalizer.without(parameters,
				FormCanonicalizer.csrfParameterName(request.getAttribute(CSRF_TOKEN_ATTRIBUTE)));
	}

	private static byte @Nullable [] readBody(InputStream in, long contentLength, int maxBody, boolean form)
			throws IOException {
		if (contentLength > 0) {
			byte[] body = new byte[(int) contentLength];
			int count = 0;
			while (count < body.length) {
				int read = in.read(body, count, body.length - count);
				if (read < 0) {
					if (count == 0 && form) {
						// parsed into parameters by the container or a filter
						return EMPTY;
					}
					throw new IOException("Request body ended after " + count + " of " + contentLength
							+ " bytes (Content-Length): the client stopped sending it, or a filter that runs "
							+ "before the idempotency filter read it");
				}
				count += read;
			}
			return body;
		}
		// no Content-Length (chunked): read up to one byte past the limit
		byte[] buffer = new byte[Math.min(INITIAL_CHUNKED_CAPACITY, maxBody + 1)];
		int count = 0;
		while (true) {
			if (count == buffer.length) {
				if (count > maxBody) {
					return null;
				}
				buffer = Arrays.copyOf(buffer, (int) Math.min((long) maxBody + 1, (long) buffer.length * 2));
			}
			int read = in.read(buffer, count, buffer.length - count);
			if (read < 0) {
				break;
			}
			count += read;
		}
		if (count > maxBody) {
			return null;
		}
		return (count == buffer.length) ? buffer : Arrays.copyOf(buffer, count);
	}

	/**
	 * Return the buffered body. The array must not be modified.
	 * @return the body
	 */
	byte[] body() {
		return this.body;
	}

	/**
	 * Return the body as it is fingerprinted: the buffered body, or for a form body with
	 * well-formed parameters the {@link FormCanonicalizer canonical form} of the
	 * request's parameters. The array must not be modified.
	 * @return the body to fingerprint
	 */
	byte[] fingerprintBody() {
		return this.fingerprintBody;
	}

	/**
	 * Return what this request is fingerprinted from: method, path, query, content type,
	 * the values of the given headers and the {@link #fingerprintBody() body}.
	 * @param headerNames the names of the headers that take part, in their order
	 * @return the input of the fingerprinter
	 */
	FingerprintInput fingerprintInput(List<String> headerNames) {
		List<HttpHeader> headers = new ArrayList<>(headerNames.size());
		for (String name : headerNames) {
			Enumeration<String> values = getHeaders(name);
			while (values != null && values.hasMoreElements()) {
				headers.add(new HttpHeader(name, values.nextElement()));
			}
		}
		byte[] body = this.fingerprintBody;
		return FingerprintInput.of(getMethod(), getRequestURI(), getQueryString(), getContentType(), headers, body, 0,
				body.length);
	}

	@Override
	public int getContentLength() {
		return this.body.length;
	}

	@Override
	public long getContentLengthLong() {
		return this.body.length;
	}

	@Override
	public ServletInputStream getInputStream() {
		BodyInputStream stream = this.inputStream;
		if (stream == null) {
			stream = new BodyInputStream(this.body);
			this.inputStream = stream;
		}
		return stream;
	}

	@Override
	public BufferedReader getReader() {
		BufferedReader current = this.reader;
		if (current == null) {
			current = new BufferedReader(
					new InputStreamReader(getInputStream(), FormCanonicalizer.charset(getCharacterEncoding())));
			this.reader = current;
		}
		return current;
	}

	@Override
	public @Nullable String getParameter(String name) {
		String[] values = parameters().get(name);
		return (values != null && values.length > 0) ? values[0] : null;
	}

	@Override
	public Map<String, String[]> getParameterMap() {
		return parameters();
	}

	@Override
	public Enumeration<String> getParameterNames() {
		return Collections.enumeration(parameters().keySet());
	}

	@Override
	public String @Nullable [] getParameterValues(String name) {
		String[] values = parameters().get(name);
		return (values != null) ? values.clone() : null;
	}

	private Map<String, String[]> parameters() {
		Map<String, String[]> current = this.parameters;
		if (current == null) {
			// the container parses only the query string once the body has been read
			Map<String, String[]> container = super.getParameterMap();
			boolean formPost = "POST".equals(getMethod()) && FormCanonicalizer.isForm(getContentType());
			current = formPost ? FormCanonicalizer.merge(container,
					FormCanonicalizer.parseLeniently(this.body, FormCanonicalizer.charset(getCharacterEncoding())))
					: container;
			this.parameters = current;
		}
		return current;
	}

	/**
	 * Input stream over the buffered body.
	 */
	private static final class BodyInputStream extends ServletInputStream {

		private final ByteArrayInputStream in;

		BodyInputStream(byte[] body) {
			this.in = new ByteArrayInputStream(body);
		}

		@Override
		public int read() {
			return this.in.read();
		}

		@Override
		public int read(byte[] b, int off, int len) {
			return this.in.read(b, off, len);
		}

		@Override
		public int available() {
			return this.in.available();
		}

		@Override
		public long skip(long n) {
			return this.in.skip(n);
		}

		@Override
		public boolean isFinished() {
			return this.in.available() == 0;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener readListener) {
			try {
				if (!isFinished()) {
					readListener.onDataAvailable();
				}
				readListener.onAllDataRead();
			}
			catch (IOException ex) {
				readListener.onError(ex);
			}
		}

	}

}
