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

import java.nio.charset.StandardCharsets;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.web.IdempotencyProblemRenderer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An application with an error envelope of its own: its
 * {@link IdempotencyProblemRenderer} bean writes the filter's problems in that envelope,
 * while the status and {@code Retry-After} stay the contract's.
 *
 * @author Idempotency contributors
 */
@WebMvcTest(ProblemRendererSliceTests.InvoiceController.class)
@Import({ ProblemRendererSliceTests.InvoiceController.class, ProblemRendererSliceTests.Envelope.class })
class ProblemRendererSliceTests {

	@Autowired
	private MockMvc mvc;

	@Test
	void aMissingKeyIsAnsweredInTheApplicationsEnvelope() throws Exception {
		this.mvc.perform(post("/invoices").contentType(MediaType.APPLICATION_JSON).content("{\"n\":1}"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentTypeCompatibleWith("application/vnd.acme.error+json"))
			.andExpect(jsonPath("$.error.code").value("KEY_MISSING"))
			.andExpect(jsonPath("$.error.status").value(400))
			.andExpect(jsonPath("$.error.type").value("https://idempotency.dev/problems/idempotency-key-missing"));
	}

	@Test
	void aReusedKeyIsAnsweredInTheApplicationsEnvelopeWithTheKey() throws Exception {
		this.mvc
			.perform(post("/invoices").header("Idempotency-Key", "inv-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"n\":1}"))
			.andExpect(status().isCreated());
		this.mvc
			.perform(post("/invoices").header("Idempotency-Key", "inv-1")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"n\":2}"))
			.andExpect(status().isUnprocessableContent())
			.andExpect(jsonPath("$.error.code").value("KEY_REUSED"))
			.andExpect(jsonPath("$.error.key").value("inv-1"))
			.andExpect(header().doesNotExist("Retry-After"));
	}

	@Configuration(proxyBeanMethods = false)
	static class Envelope {

		@Bean
		IdempotencyProblemRenderer acmeErrors() {
			return (problem, request, response) -> {
				response.setContentType("application/vnd.acme.error+json");
				String key = (problem.idempotencyKey() != null) ? ",\"key\":\"" + problem.idempotencyKey() + "\"" : "";
				String body = "{\"error\":{\"code\":\"" + problem.kind().name() + "\",\"status\":" + problem.status()
						+ ",\"type\":\"" + problem.type() + "\"" + key + "}}";
				response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
			};
		}

	}

	@RestController
	static class InvoiceController {

		@PostMapping("/invoices")
		@Idempotent
		ResponseEntity<String> create(@RequestBody String body) {
			return ResponseEntity.status(HttpStatus.CREATED).body("{\"invoice\":1}");
		}

	}

	@SpringBootApplication
	static class SliceApplication {

	}

}
