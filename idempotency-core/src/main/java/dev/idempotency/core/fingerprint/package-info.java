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
 * Request fingerprinting: the
 * {@link dev.idempotency.core.fingerprint.RequestFingerprinter} strategy, the parts of a
 * request it reads ({@link dev.idempotency.core.fingerprint.FingerprintInput}) and the
 * default {@link dev.idempotency.core.fingerprint.Sha256RequestFingerprinter}, with its
 * JSON canonicalisation. Everything else here is package-private machinery of that
 * fingerprinter.
 * <p>
 * The value it computes, {@link dev.idempotency.core.RequestFingerprint}, is not here: it
 * belongs to the record model in {@code dev.idempotency.core}, next to the key and the
 * record that holds it. Stores persist and compare fingerprints without knowing how they
 * were computed, so the store SPI depends on the record model only, never on this
 * package.
 */
@NullMarked
package dev.idempotency.core.fingerprint;

import org.jspecify.annotations.NullMarked;
