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

import dev.idempotency.spring.VirtualThreads;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.webflux.IdempotencyWebFilter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract of {@link AbstractHttpContractIT}, unchanged, against the WebFlux
 * filter of a reactive application on Reactor Netty, over the Redis store on a real Redis
 * server. Every store call is checked to run off the event loop: one made on a
 * non-blocking thread fails its request and this test.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = WebFluxContractTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@Import(RedisHttpContractIT.RedisServer.class)
@TestPropertySource(properties = { "idempotency.store.type=redis", "idempotency.redis.key-prefix=it-http-webflux:",
		"spring.data.redis.repositories.enabled=false" })
class WebFluxRedisHttpContractIT extends AbstractHttpContractIT {

	@Autowired
	ApplicationContext context;

	// the contract's handlers return a Mono, which runs on the store scheduler's thread
	// that read the body: virtual if that scheduler's are (docs/virtual-threads.md)
	@Override
	protected boolean handlersOnVirtualThreads() {
		return VirtualThreads.onBoundedElastic();
	}

	@AfterEach
	void storeNeverCalledOnAnEventLoop() {
		assertThat(outage().nonBlockingThreadCalls()).as("store calls on a non-blocking thread").isZero();
	}

	@Test
	void usesTheWebFluxFilterOverTheRedisStore() {
		assertThat(this.context.getBeansOfType(IdempotencyWebFilter.class)).hasSize(1);
		assertThat(this.context.getBeanNamesForType(IdempotencyFilter.class)).isEmpty();
		assertThat(outage().delegate()).isInstanceOf(RedisIdempotencyStore.class);
	}

}
