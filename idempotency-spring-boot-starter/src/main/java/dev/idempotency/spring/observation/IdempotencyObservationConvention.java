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

package dev.idempotency.spring.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * {@link ObservationConvention} for the observations of requests to idempotent endpoints.
 * Declare a bean of this type to replace the
 * {@link DefaultIdempotencyObservationConvention}, typically by extending it.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see IdempotencyObservationDocumentation
 */
public interface IdempotencyObservationConvention extends ObservationConvention<IdempotencyObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof IdempotencyObservationContext;
	}

}
