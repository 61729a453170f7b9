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
 * Idempotent method calls: {@link dev.idempotency.spring.Idempotent @Idempotent} with a
 * {@code key} on a method of any Spring bean, and the {@link IdempotencyTemplate} for
 * code without annotations. The first call under a key runs and its result is stored; a
 * later call under that key gets an equal result without running.
 */
@NullMarked
package dev.idempotency.spring.method;

import org.jspecify.annotations.NullMarked;
