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

/**
 * Micrometer Observation support for every entry point: one observation per request to an
 * idempotent endpoint ({@code idempotency.request}) and one per call of an
 * {@code @Idempotent} method, of {@code IdempotencyTemplate} or of an idempotent Kafka
 * listener ({@code idempotency.call}), with its outcome as a low-cardinality key, the
 * source of both the metrics and the spans. See
 * {@link dev.idempotency.spring.observation.IdempotencyObservationDocumentation}.
 */
@NullMarked
package dev.idempotency.spring.observation;

import org.jspecify.annotations.NullMarked;
