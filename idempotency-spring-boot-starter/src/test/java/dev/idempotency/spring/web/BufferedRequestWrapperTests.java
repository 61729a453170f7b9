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
