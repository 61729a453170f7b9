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

package dev.idempotency.spring.actuate;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without {@code management.endpoints.web.exposure.include}, the {@code idempotency}
 * endpoint is not reachable over HTTP (as with every Actuator endpoint but
 * {@code health}), while the health indicator is.
 *
 * @author Idempotency contributors
 */
@Import(AbstractOpsIT.RealServers.class)
class IdempotencyEndpointExposureIT extends AbstractOpsIT {

	@Autowired
	ApplicationContext context;

	@Test
	void endpointIsNotExposedByDefault() throws Exception {
		String key = newKey();
		assertThat(post("/ops/pay", key, "a").statusCode()).isEqualTo(201);
		assertThat(get("/actuator/idempotency?key=" + key).statusCode()).isEqualTo(404);
		assertThat(delete("/actuator/idempotency?key=" + key).statusCode()).isIn(404, 405);
		assertThat(post("/ops/pay", key, "a").headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.context.getBeansOfType(IdempotencyEndpoint.class)).isEmpty();
	}

	@Test
	void healthIsExposedByDefault() throws Exception {
		assertThat(get("/actuator/health").statusCode()).isEqualTo(200);
		assertThat(parse(get("/actuator/health")).at("/components/idempotency/status").asString()).isEqualTo("UP");
		assertThat(parse(get("/actuator/health")).at("/components/idempotency/details/circuitBreaker").asString())
			.isEqualTo("CLOSED");
	}

}
