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

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link CapturingResponseWrapper}.
 *
 * @author Idempotency contributors
 */
class CapturingResponseWrapperTests {

	private final MockHttpServletResponse response = new MockHttpServletResponse();

	private final AtomicInteger streamingStarts = new AtomicInteger();

	private final CapturingResponseWrapper wrapper = new CapturingResponseWrapper(this.response, 10,
			this.streamingStarts::incrementAndGet);

	@Test
	void flushDoesNotCommit() throws Exception {
		this.wrapper.getOutputStream().write(bytes("abc"));
		this.wrapper.getOutputStream().flush();
		this.wrapper.flushBuffer();
		assertThat(this.response.isCommitted()).isFalse();
		assertThat(this.response.getContentAsByteArray()).isEmpty();
		assertThat(this.wrapper.bufferedBody()).isEqualTo(bytes("abc"));
	}

	@Test
	void contentLengthIsRecomputed() throws Exception {
		this.wrapper.setContentLength(99);
		this.wrapper.setHeader("Content-Length", "98");
		this.wrapper.getOutputStream().write(bytes("abcd"));
		assertThat(this.response.getHeader("Content-Length")).isNull();
		this.wrapper.writeBufferedBody();
		assertThat(this.response.getContentLength()).isEqualTo(4);
		assertThat(this.response.getContentAsByteArray()).isEqualTo(bytes("abcd"));
	}

	@Test
	void writerUsesTheResponseEncodingAndKeepsIt() throws Exception {
		this.wrapper.setContentType("text/plain");
		this.wrapper.setCharacterEncoding("UTF-8");
		PrintWriter writer = this.wrapper.getWriter();
		writer.write("äö");
		this.wrapper.setCharacterEncoding("ISO-8859-1");
		this.wrapper.setContentType("text/html;charset=ISO-8859-1");
		this.wrapper.flushWriter();
		assertThat(this.wrapper.bufferedBody()).isEqualTo("äö".getBytes(StandardCharsets.UTF_8));
		assertThat(this.response.getCharacterEncoding()).isEqualTo("UTF-8");
		assertThat(this.response.getContentType()).isEqualTo("text/html;charset=UTF-8");
	}

	@Test
	void writerWithoutEncodingFixesTheDefault() {
		this.wrapper.setContentType("text/plain");
		this.wrapper.getWriter().write("é");
		this.wrapper.flushWriter();
		assertThat(this.wrapper.bufferedBody()).isEqualTo("é".getBytes(StandardCharsets.ISO_8859_1));
		assertThat(this.response.getContentType()).isEqualTo("text/plain;charset=ISO-8859-1");
	}

	@Test
	void resetBufferAndResetDiscardTheBody() throws Exception {
		this.wrapper.getWriter().write("abc");
		this.wrapper.resetBuffer();
		this.wrapper.getOutputStream().write(bytes("d"));
		assertThat(this.wrapper.bufferedBody()).isEqualTo(bytes("d"));
		this.wrapper.setHeader("X-A", "1");
		this.wrapper.setStatus(201);
		this.wrapper.reset();
		assertThat(this.wrapper.bufferedBody()).isEmpty();
		assertThat(this.response.getHeader("X-A")).isNull();
		assertThat(this.response.getStatus()).isEqualTo(200);
	}

	@Test
	void bodyOverTheLimitIsStreamed() throws Exception {
		this.wrapper.setContentLength(25);
		this.wrapper.getOutputStream().write(bytes("0123456"));
		assertThat(this.wrapper.isStreaming()).isFalse();
		this.wrapper.getOutputStream().write(bytes("789abcdefghij"));
		this.wrapper.getOutputStream().write(bytes("klmno"));
		assertThat(this.wrapper.isStreaming()).isTrue();
		assertThat(this.streamingStarts).hasValue(1);
		assertThat(this.response.getContentAsByteArray()).isEqualTo(bytes("0123456789abcdefghijklmno"));
		assertThat(this.response.getContentLength()).isEqualTo(25);
		assertThat(this.wrapper.bufferedLength()).isZero();
	}

	@Test
	void sendErrorDiscardsTheBodyAndIgnoresLaterOutput() throws Exception {
		this.wrapper.getOutputStream().write(bytes("abc"));
		this.wrapper.sendError(404);
		this.wrapper.getOutputStream().write(bytes("ignored"));
		assertThat(this.wrapper.isErrorSent()).isTrue();
		assertThat(this.wrapper.bufferedBody()).isEmpty();
		assertThat(this.response.getStatus()).isEqualTo(404);
	}

	@Test
	void redirectKeepsNoBody() throws Exception {
		this.wrapper.getOutputStream().write(bytes("abc"));
		this.wrapper.sendRedirect("/elsewhere");
		this.wrapper.getOutputStream().write(bytes("ignored"));
		assertThat(this.wrapper.bufferedBody()).isEmpty();
		assertThat(this.response.getRedirectedUrl()).isEqualTo("/elsewhere");
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

}
