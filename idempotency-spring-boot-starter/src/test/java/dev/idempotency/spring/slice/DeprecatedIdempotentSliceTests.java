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
 * An HTTP endpoint still marked with the deprecated
 * {@code dev.idempotency.spring.web.Idempotent}: the filter finds it, and its policy
 * attribute names the policy, as with {@link dev.idempotency.spring.Idempotent}.
 *
 * @author Idempotency contributors
 */
@WebMvcTest(controllers = DeprecatedIdempotentSliceTests.OrderController.class,
		properties = "idempotency.policies.orders.key.header=Order-Id")
// component scanning leaves out the classes nested in a test
@Import(DeprecatedIdempotentSliceTests.OrderController.class)
class DeprecatedIdempotentSliceTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private ApplicationContext context;

	@Test
	void theFormerAnnotationMakesAnEndpointIdempotentUnderItsPolicy() throws Exception {
		this.mvc.perform(post("/orders").contentType(MediaType.APPLICATION_JSON).content("{\"item\":\"a\"}"))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.type").value(endsWith("key-missing")));
		String first = this.mvc
			.perform(post("/orders").header("Order-Id", "old-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"a\"}"))
			.andExpect(status().isCreated())
			.andReturn()
			.getResponse()
			.getContentAsString();
		this.mvc
			.perform(post("/orders").header("Order-Id", "old-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"item\":\"a\"}"))
			.andExpect(status().isCreated())
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(content().string(first));
		assertThat(this.context.getBean(OrderController.class).orders).isOne();
	}

	@SpringBootApplication
	static class SliceApplication {

	}

	@RestController
	static class OrderController {

		int orders;

		@PostMapping("/orders")
		@SuppressWarnings("deprecation")
		@dev.idempotency.spring.web.Idempotent(policy = "orders")
		ResponseEntity<String> order(@RequestBody String body) {
			this.orders++;
			return ResponseEntity.status(HttpStatus.CREATED).body("{\"order\":" + this.orders + "}");
		}

	}

}
