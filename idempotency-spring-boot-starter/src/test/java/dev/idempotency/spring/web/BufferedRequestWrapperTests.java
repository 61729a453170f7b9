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

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;

/**
 * Tests for {@link BufferedRequestWrapper}.
 *
 * @author Idempotency contributors
 */
class BufferedRequestWrapperTests {

	@Test
	void bodyIsReadableAgain() throws Exception {
		MockHttpServletRequest request = request("grüß", "text/plain");
		request.setCharacterEncoding("UTF-8");
		BufferedRequestWrapper wrapper = BufferedRequestWrapper.read(request, 100);
		assertThat(wrapper).isNotNull();
		assertThat(wrapper.body()).isEqualTo("grüß".getBytes(StandardCharsets.UTF_8));
		assertThat(wrapper.getReader().readLine()).isEqualTo("grüß");
		assertThat(wrapper.getContentLength()).isEqualTo(6);
	}

	@Test
	void bodyOverTheLimitIsRejectedFromContentLength() throws Exception {
		assertThat(BufferedRequestWrapper.read(request("x".repeat(11), "text/plain"), 10)).isNull();
		assertThat(BufferedRequestWrapper.read(request("x".repeat(10), "text/plain"), 10)).isNotNull();
	}

	@Test
	void bodyWithoutContentLengthIsBoundedToo() throws Exception {
		MockHttpServletRequest large = chunked("x".repeat(20_000));
		assertThat(BufferedRequestWrapper.read(large, 10_000)).isNull();
		MockHttpServletRequest small = chunked("x".repeat(20_000));
		BufferedRequestWrapper wrapper = BufferedRequestWrapper.read(small, 20_000);
		assertThat(wrapper).isNotNull();
		assertThat(wrapper.body()).hasSize(20_000);
	}

	@Test
	void formParametersComeFromTheBodyAfterTheQuery() throws Exception {
		MockHttpServletRequest request = request("a=1&b=J%C3%BCrgen&a=2&bad=%zz", "application/x-www-form-urlencoded");
		request.setCharacterEncoding("UTF-8");
		request.setParameter("a", "0");
		BufferedRequestWrapper wrapper = BufferedRequestWrapper.read(request, 100);
		assertThat(wrapper).isNotNull();
		assertThat(wrapper.getParameterValues("a")).containsExactly("0", "1", "2");
		assertThat(wrapper.getParameter("b")).isEqualTo("Jürgen");
		assertThat(wrapper.getParameter("bad")).isNull();
		assertThat(wrapper.getParameterMap()).containsOnlyKeys("a", "b");
	}

	@Test
	void formBodyIsFingerprintedByItsParametersWhetherOrNotItWasConsumed() throws Exception {
		String body = "b=J%C3%BCrgen&a=1&a=2&c=x+y";
		MockHttpServletRequest unread = request(body, "application/x-www-form-urlencoded");
		unread.setCharacterEncoding("UTF-8");
		unread.setQueryString("a=0");
		unread.setParameter("a", "0");
		BufferedRequestWrapper fromBody = BufferedRequestWrapper.read(unread, 100);
		// consumed by the container's parameter parsing: no bytes left, parameters parsed
		MockHttpServletRequest consumed = consumed(body.length(), "application/x-www-form-urlencoded");
		consumed.setQueryString("a=0");
		consumed.setParameter("a", "0", "1", "2");
		consumed.setParameter("c", "x y");
		consumed.setParameter("b", "Jürgen");
		BufferedRequestWrapper fromParameters = BufferedRequestWrapper.read(consumed, 100);
		assertThat(fromBody).isNotNull();
		assertThat(fromParameters).isNotNull();
		assertThat(new String(fromBody.fingerprintBody(), StandardCharsets.US_ASCII))
			.isEqualTo("a=0&a=1&a=2&b=J%C3%BCrgen&c=x%20y");
		assertThat(fromParameters.fingerprintBody()).isEqualTo(fromBody.fingerprintBody());
		assertThat(fromParameters.body()).isEmpty();
		assertThat(fromParameters.getParameterValues("a")).containsExactly("0", "1", "2");
		assertThat(fromBody.body()).isEqualTo(body.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void formBodyConsumedWithoutContentLengthIsFingerprintedByItsParameters() throws Exception {
		MockHttpServletRequest consumed = chunked("");
		consumed.setContentType("application/x-www-form-urlencoded");
		consumed.setParameter("amount", "10");
		BufferedRequestWrapper wrapper = BufferedRequestWrapper.read(consumed, 100);
		assertThat(wrapper).isNotNull();
		assertThat(wrapper.fingerprintBody()).isEqualTo("amount=10".getBytes(StandardCharsets.US_ASCII));
		// the parameters alone show that the body was over the limit
		consumed.setParameter("amount", "1".repeat(101));
		assertThat(BufferedRequestWrapper.read(consumed, 100)).isNull();
		// not when the query string could hold them
		consumed.setQueryString("amount=" + "1".repeat(101));
		assertThat(BufferedRequestWrapper.read(consumed, 100)).isNotNull();
	}

	@Test
	void formBodyThatIsNotStrictlyWellFormedIsFingerprintedRaw() throws Exception {
		for (String body : new String[] { "a=1&", "&a=1", "a=1&&b=2", "a", "=1", "a=%zz", "a=%C3", "a=b c", "a=\u00e9",
				"a=1\r\n" }) {
			MockHttpServletRequest request = request(body, "application/x-www-form-urlencoded");
			request.setCharacterEncoding("UTF-8");
			BufferedRequestWrapper wrapper = BufferedRequestWrapper.read(request, 100);
			assertThat(wrapper).isNotNull();
			assertThat(wrapper.fingerprintBody()).as(body).isEqualTo(body.getBytes(StandardCharsets.UTF_8));
		}
	}

	@Test
	void consumedBodiesThatCannotBeFingerprintedAreRefused() {
		assertThatIOException().isThrownBy(() -> BufferedRequestWrapper.read(consumed(10, "application/json"), 100))
			.withMessageContaining("ended after 0 of 10 bytes");
		MockHttpServletRequest multipart = chunked("");
		multipart.setContentType("multipart/form-data; boundary=x");
		assertThatIOException().isThrownBy(() -> BufferedRequestWrapper.read(multipart, 100))
			.withMessageContaining("multipart/form-data");
	}

	private static MockHttpServletRequest consumed(int contentLength, String contentType) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/x") {

			@Override
			public long getContentLengthLong() {
				return contentLength;
			}

		};
		request.setContentType(contentType);
		request.setCharacterEncoding("UTF-8");
		return request;
	}

	private static MockHttpServletRequest request(String body, String contentType) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/x");
		request.setContent(body.getBytes(StandardCharsets.UTF_8));
		request.setContentType(contentType);
		return request;
	}

	private static MockHttpServletRequest chunked(String body) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/x") {

			@Override
			public long getContentLengthLong() {
				return -1;
			}

		};
		request.setContent(body.getBytes(StandardCharsets.UTF_8));
		return request;
	}

}
