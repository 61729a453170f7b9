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
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.util.MimeType;

/**
 * Response that keeps the handler's body in memory, so that the key can be completed
 * before the client sees anything, and so that the bytes the client receives are exactly
 * the bytes stored for replay.
 * <p>
 * Status and headers go through to the wrapped response as they are set (it is not
 * committed while the body is buffered: {@link #flushBuffer()} and {@code flush()} do not
 * reach it). {@code Content-Length} is held back and recomputed from the body. Once the
 * body would exceed the limit, the wrapper stops buffering: what it holds and everything
 * after it are streamed to the client as produced ({@link #isStreaming()}).
 * <p>
 * {@link #sendError} and {@code sendRedirect} discard the buffered body and go through,
 * so that the container renders its error page; later output is ignored, as a container
 * does after {@code sendError}.
 * <p>
 * Not thread-safe, like any response.
 *
 * @author Idempotency contributors
 */
final class CapturingResponseWrapper extends HttpServletResponseWrapper {

	private static final byte[] EMPTY = new byte[0];

	private static final int MIN_CAPACITY = 256;

	private final int limit;

	private final Runnable beforeStreaming;

	private byte[] buffer = EMPTY;

	private int count;

	private boolean streaming;

	private boolean suspended;

	private boolean errorSent;

	private long declaredLength = -1;

	private @Nullable CapturingOutputStream outputStream;

	private @Nullable PrintWriter writer;

	private @Nullable String writerEncoding;

	/**
	 * Create a wrapper.
	 * @param response the response to wrap
	 * @param limit largest body kept in memory, in bytes
	 * @param beforeStreaming called once when the body exceeds the limit, before the
	 * first byte goes to the client
	 */
	CapturingResponseWrapper(HttpServletResponse response, int limit, Runnable beforeStreaming) {
		super(response);
		this.limit = limit;
		this.beforeStreaming = beforeStreaming;
	}

	/**
	 * Return whether the body exceeded the limit and was streamed to the client.
	 * @return {@code true} once streaming
	 */
	boolean isStreaming() {
		return this.streaming;
	}

	/**
	 * Return whether {@code sendError} was called.
	 * @return {@code true} after {@code sendError}
	 */
	boolean isErrorSent() {
		return this.errorSent;
	}

	/**
	 * Return the number of body bytes buffered.
	 * @return the count
	 */
	int bufferedLength() {
		return this.count;
	}

	/**
	 * Return a copy of the buffered body.
	 * @return the body
	 */
	byte[] bufferedBody() {
		return Arrays.copyOf(this.buffer, this.count);
	}

	/**
	 * Push characters pending in the writer into the buffer.
	 */
	void flushWriter() {
		if (this.writer != null) {
			this.writer.flush();
		}
	}

	/**
	 * Write the buffered body to the wrapped response with its exact
	 * {@code Content-Length}.
	 * @throws IOException if the client connection fails
	 */
	void writeBufferedBody() throws IOException {
		HttpServletResponse response = (HttpServletResponse) getResponse();
		response.setContentLength(this.count);
		if (this.count > 0) {
			response.getOutputStream().write(this.buffer, 0, this.count);
		}
	}

	@Override
	public ServletOutputStream getOutputStream() {
		CapturingOutputStream stream = this.outputStream;
		if (stream == null) {
			stream = new CapturingOutputStream();
			this.outputStream = stream;
		}
		return stream;
	}

	@Override
	public PrintWriter getWriter() {
		PrintWriter current = this.writer;
		if (current == null) {
			// as containers do: the writer fixes the content type's encoding
			String encoding = getCharacterEncoding();
			super.setCharacterEncoding(encoding);
			this.writerEncoding = encoding;
			current = new PrintWriter(new OutputStreamWriter(getOutputStream(), Charset.forName(encoding)), false);
			this.writer = current;
		}
		return current;
	}

	@Override
	public void setCharacterEncoding(String encoding) {
		// ignored once the writer exists, as the servlet specification requires
		if (this.writer == null) {
			super.setCharacterEncoding(encoding);
		}
	}

	@Override
	public void setCharacterEncoding(Charset encoding) {
		if (this.writer == null) {
			super.setCharacterEncoding(encoding);
		}
	}

	@Override
	public void setContentType(@Nullable String type) {
		String encoding = this.writerEncoding;
		if (type != null && encoding != null) {
			// the writer's encoding wins over a charset set afterwards
			try {
				MimeType mimeType = MimeType.valueOf(type);
				super.setContentType(new MimeType(mimeType, Charset.forName(encoding)).toString());
				return;
			}
			catch (IllegalArgumentException ex) {
				// not a media type: leave it to the container
			}
		}
		super.setContentType(type);
	}

	@Override
	public void setContentLength(int length) {
		setContentLengthLong(length);
	}

	@Override
	public void setContentLengthLong(long length) {
		this.declaredLength = length;
		if (this.streaming) {
			super.setContentLengthLong(length);
		}
	}

	@Override
	public void setHeader(String name, @Nullable String value) {
		if (!setSpecialHeader(name, value)) {
			super.setHeader(name, value);
		}
	}

	@Override
	public void addHeader(String name, @Nullable String value) {
		if (!setSpecialHeader(name, value)) {
			super.addHeader(name, value);
		}
	}

	@Override
	public void setIntHeader(String name, int value) {
		if (!setSpecialHeader(name, Integer.toString(value))) {
			super.setIntHeader(name, value);
		}
	}

	@Override
	public void addIntHeader(String name, int value) {
		if (!setSpecialHeader(name, Integer.toString(value))) {
			super.addIntHeader(name, value);
		}
	}

	private boolean setSpecialHeader(String name, @Nullable String value) {
		String lowerCase = name.toLowerCase(Locale.ROOT);
		if (lowerCase.equals("content-length")) {
			if (value != null) {
				try {
					setContentLengthLong(Long.parseLong(value.strip()));
				}
				catch (NumberFormatException ex) {
					// not a length: ignored, as the body's length is sent anyway
				}
			}
			return true;
		}
		if (lowerCase.equals("content-type")) {
			setContentType(value);
			return true;
		}
		return false;
	}

	@Override
	public boolean containsHeader(String name) {
		if (name.equalsIgnoreCase("Content-Length")) {
			return this.declaredLength >= 0 || super.containsHeader(name);
		}
		return super.containsHeader(name);
	}

	@Override
	public void flushBuffer() throws IOException {
		flushWriter();
		if (this.streaming) {
			super.flushBuffer();
		}
	}

	@Override
	public void resetBuffer() {
		if (this.streaming) {
			super.resetBuffer();
			return;
		}
		flushWriter();
		this.count = 0;
		super.resetBuffer();
	}

	@Override
	public void reset() {
		if (this.streaming) {
			super.reset();
			return;
		}
		flushWriter();
		this.count = 0;
		this.declaredLength = -1;
		this.writer = null;
		this.writerEncoding = null;
		super.reset();
	}

	@Override
	public void sendError(int status) throws IOException {
		beforeError();
		super.sendError(status);
	}

	@Override
	public void sendError(int status, String message) throws IOException {
		beforeError();
		super.sendError(status, message);
	}

	private void beforeError() {
		if (!this.streaming) {
			flushWriter();
			this.count = 0;
			this.suspended = true;
			this.errorSent = true;
		}
	}

	@Override
	public void sendRedirect(String location) throws IOException {
		beforeRedirect();
		super.sendRedirect(location);
	}

	@Override
	public void sendRedirect(String location, int status) throws IOException {
		beforeRedirect();
		super.sendRedirect(location, status);
	}

	@Override
	public void sendRedirect(String location, boolean clearBuffer) throws IOException {
		beforeRedirect();
		super.sendRedirect(location, clearBuffer);
	}

	@Override
	public void sendRedirect(String location, int status, boolean clearBuffer) throws IOException {
		beforeRedirect();
		super.sendRedirect(location, status, clearBuffer);
	}

	private void beforeRedirect() {
		if (!this.streaming) {
			// the container sends a redirect without the body written so far (it never
			// reached it), so none is kept either
			flushWriter();
			this.count = 0;
			this.suspended = true;
		}
	}

	private void write(byte[] bytes, int offset, int length) throws IOException {
		if (this.suspended) {
			return;
		}
		if (this.streaming) {
			super.getOutputStream().write(bytes, offset, length);
			return;
		}
		long needed = (long) this.count + length;
		if (needed > this.limit) {
			startStreaming();
			super.getOutputStream().write(bytes, offset, length);
			return;
		}
		if (needed > this.buffer.length) {
			long capacity = Math.max(needed, Math.max(MIN_CAPACITY, (long) this.buffer.length * 2));
			if (this.declaredLength > needed) {
				capacity = Math.max(capacity, this.declaredLength);
			}
			this.buffer = Arrays.copyOf(this.buffer, (int) Math.min(capacity, this.limit));
		}
		System.arraycopy(bytes, offset, this.buffer, this.count, length);
		this.count += length;
	}

	private void startStreaming() throws IOException {
		this.streaming = true;
		this.beforeStreaming.run();
		if (this.declaredLength >= 0) {
			super.setContentLengthLong(this.declaredLength);
		}
		OutputStream out = super.getOutputStream();
		if (this.count > 0) {
			out.write(this.buffer, 0, this.count);
		}
		this.buffer = EMPTY;
		this.count = 0;
	}

	/**
	 * Output stream that appends to the buffer, or streams once the limit is exceeded.
	 */
	private final class CapturingOutputStream extends ServletOutputStream {

		private final byte[] single = new byte[1];

		@Override
		public void write(int b) throws IOException {
			this.single[0] = (byte) b;
			CapturingResponseWrapper.this.write(this.single, 0, 1);
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			Objects.checkFromIndexSize(off, len, b.length);
			CapturingResponseWrapper.this.write(b, off, len);
		}

		@Override
		public void flush() throws IOException {
			if (CapturingResponseWrapper.this.streaming) {
				CapturingResponseWrapper.super.getOutputStream().flush();
			}
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setWriteListener(WriteListener writeListener) {
			throw new UnsupportedOperationException("Non-blocking output is not supported for idempotent requests");
		}

	}

}
