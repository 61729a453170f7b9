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
 * JMH benchmarks of the core's hot paths: request fingerprinting, the stored response
 * codec, the in-memory store and the engine. Built only with the {@code benchmarks}
 * Maven profile; see {@code docs/benchmarks/jmh.md}.
 */
@NullMarked
package dev.idempotency.core.jmh;

import org.jspecify.annotations.NullMarked;
