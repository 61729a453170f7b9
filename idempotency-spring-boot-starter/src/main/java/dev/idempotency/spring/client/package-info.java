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
 * Client side of idempotency: a {@code RestClient}/{@code RestTemplate} interceptor and a
 * {@code WebClient} filter that give each logical request one idempotency key and retry
 * transient failures with that same key, and their auto-configuration.
 */
@NullMarked
package dev.idempotency.spring.client;

import org.jspecify.annotations.NullMarked;
