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

package dev.idempotency.core;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Access to SHA-256 message digests, which every Java platform must provide, for the
 * digests of keys and scopes. The request fingerprinter pools digests of its own.
 *
 * @author Idempotency contributors
 */
final class Sha256 {

	// key digests are computed on every store call: spare each the provider look-up.
	// Kept per thread, unlike the fingerprinter's workspaces and the encrypting store's
	// ciphers, which are pooled: a thread that lives for one request (a virtual thread)
	// builds one digest, 44 ns and 288 B on Temurin 25 (ThreadCacheBenchmark.getDigest),
	// about what a pool's two atomic operations would cost the request's several key
	// digests, and nothing on a platform thread (docs/virtual-threads.md)
	private static final ThreadLocal<MessageDigest> THREAD_DIGEST = ThreadLocal.withInitial(Sha256::newDigest);

	private Sha256() {
	}

	/**
	 * Return this thread's digest, reset. It must not escape the calling method, nor be
	 * used by a method it calls.
	 * @return the digest
	 */
	static MessageDigest threadDigest() {
		MessageDigest digest = THREAD_DIGEST.get();
		digest.reset();
		return digest;
	}

	private static MessageDigest newDigest() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by the Java platform", ex);
		}
	}

}
