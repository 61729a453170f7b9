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

package dev.idempotency.spring.autoconfigure;

import dev.idempotency.core.fingerprint.RequestFingerprinter;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.spring.autoconfigure.PolicyMapper.FingerprintSettings;

/**
 * Creates the default fingerprinter of a policy: a {@link Sha256RequestFingerprinter}
 * with the policy's JSON settings.
 *
 * @author Idempotency contributors
 */
final class Fingerprinters {

	private Fingerprinters() {
	}

	static RequestFingerprinter create(FingerprintSettings settings) {
		Sha256RequestFingerprinter fingerprinter = new Sha256RequestFingerprinter();
		fingerprinter.setCanonicalizeJson(settings.canonicalJson());
		// throws IllegalArgumentException for a malformed pointer:
		// reported with its property
		fingerprinter.setExcludedJsonPointers(settings.excludedJsonPointers());
		return fingerprinter;
	}

}
