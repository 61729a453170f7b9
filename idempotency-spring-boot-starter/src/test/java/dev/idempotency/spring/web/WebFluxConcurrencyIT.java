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

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/**
 * {@link ConcurrencyIT}, unchanged, against the WebFlux filter of a reactive application
 * on Reactor Netty, whose handler runs on the store scheduler.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = WebFluxContractTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
class WebFluxConcurrencyIT extends ConcurrencyIT {

	@Override
	protected boolean handlersOnVirtualThreads() {
		return VirtualThreads.onBoundedElastic();
	}

}
