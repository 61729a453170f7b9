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
 * What every entry point of the starter shares: the
 * {@link dev.idempotency.spring.Idempotent} annotation, and the
 * {@link dev.idempotency.spring.NamedPolicy policies} it names, resolved once from the
 * {@code idempotency.*} properties into {@link dev.idempotency.spring.NamedPolicies}. The
 * HTTP filter ({@code web}), idempotent bean methods and the template ({@code method})
 * and Kafka listeners ({@code kafka}) import this package; it imports none of them.
 */
@NullMarked
package dev.idempotency.spring;

import org.jspecify.annotations.NullMarked;
