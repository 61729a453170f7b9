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

package dev.idempotency.spring.slice;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.web.IdempotencyFilter;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.endsWith;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A user's controller test, a {@link WebMvcTest @WebMvcTest} slice: the slice brings the
 * idempotency filter along, with the in-memory store, so the controller answers as it
 * does in production.
 *
 * @author Idempotency contributors
 */
@WebMvcTest(WebMvcSliceTests.OrderController.class)
// component scanning leaves out the classes nested in a test
@Import(WebMvcSliceTests.OrderController.class)
class WebMvcSliceTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private ApplicationContext context;

	@Test
	void theSliceHasTheFilterAndTheInMemoryStore() {
		assertThat(this.context.getBeansOfType(IdempotencyFilter.class)).hasSize(1);
		assertThat(this.context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
	}

	@Test
	void aMissingKeyIsAProblem() throws Exception {
		this.mvc.perform(post("/orders").contentType(MediaType.APPLICATION_JSON).content("{\"item\":\"a\"}"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.type").value(endsWith("key-missing")));
	}

	@Test
	void aRetryIsReplayedAndAnotherBodyIsRefused() throws Exception {
		String first = this.mvc
			.perform(post("/orders").header("Idempotency-Key", "slice-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"a\"}"))
			.andExpect(status().isCreated())
			.andReturn()
			.getResponse()
			.getContentAsString();
		this.mvc
			.perform(post("/orders").header("Idempotency-Key", "slice-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"a\"}"))
			.andExpect(status().isCreated())
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(content().string(first));
		this.mvc
			.perform(post("/orders").header("Idempotency-Key", "slice-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"b\"}"))
			.andExpect(status().isUnprocessableContent());
		assertThat(this.context.getBean(OrderController.class).orders).isOne();
	}

	@SpringBootApplication
	static class SliceApplication {

	}

	@RestController
	static class OrderController {

		int orders;

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<String> order(@RequestBody String body) {
			this.orders++;
			return ResponseEntity.status(HttpStatus.CREATED).body("{\"order\":" + this.orders + "}");
		}

	}

}
