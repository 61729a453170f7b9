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

package dev.idempotency.spring.web;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import dev.idempotency.core.FingerprintInput;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.RequestFingerprinter;

/**
 * Raw-bytes fingerprinter for tests: SHA-256 over every part of the input, each part
 * length-prefixed.
 *
 * @author Idempotency contributors
 */
class TestFingerprinter implements RequestFingerprinter {

	@Override
	public RequestFingerprint fingerprint(FingerprintInput input) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			update(digest, input.method());
			update(digest, input.path());
			update(digest, String.valueOf(input.query()));
			update(digest, String.valueOf(input.contentType()));
			for (HttpHeader header : input.headers()) {
				update(digest, header.name().toLowerCase(java.util.Locale.ROOT));
				update(digest, header.value());
			}
			ByteBuffer body = input.body().duplicate();
			digest.update(ByteBuffer.allocate(4).putInt(body.remaining()).flip());
			digest.update(body);
			return RequestFingerprint.of(digest.digest());
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void update(MessageDigest digest, String value) {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		digest.update(ByteBuffer.allocate(4).putInt(bytes.length).flip());
		digest.update(bytes);
	}

}
