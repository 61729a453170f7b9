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

package dev.idempotency.core.fingerprint;

import dev.idempotency.core.RequestFingerprint;

/**
 * Strategy that computes the fingerprint of a request. Two requests with the same key are
 * the same request exactly when their fingerprints are equal.
 * <p>
 * Implementations must be thread-safe and must not fail for any input: a body that cannot
 * be interpreted is fingerprinted as raw bytes.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see Sha256RequestFingerprinter
 */
@FunctionalInterface
public interface RequestFingerprinter {

	/**
	 * Compute the fingerprint of the given request.
	 * @param input the request's parts, never {@code null}
	 * @return the fingerprint, never {@code null}
	 */
	RequestFingerprint fingerprint(FingerprintInput input);

}
