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

import java.time.Instant;
import java.util.Map;

import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.EncryptionKeyRing;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.Encryption;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Encryption at rest of stored responses ({@code idempotency.encryption.enabled}): the
 * engine's store is wrapped in an {@link EncryptingIdempotencyStore}, innermost of the
 * engine's decorators, so that metrics time the encryption and the replay cache holds
 * decrypted responses. The store bean itself, its codec and the replay path are left as
 * they are; without the property nothing here is created. The keys come from an
 * {@link EncryptionKeyRing} bean when there is one (an application that fetches them from
 * a key management service), else from {@code idempotency.encryption.keys} and
 * {@code idempotency.encryption.primary-key-id}. Responses stored in the clear are
 * answered as not replayable, unless
 * {@code idempotency.encryption.replay-unencrypted-until} names until when the ones
 * stored before encryption was turned on are still replayed.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "idempotency.encryption.enabled")
class EncryptionConfiguration {

	private static final Log logger = LogFactory.getLog(EncryptionConfiguration.class);

	@Bean
	@Order(Ordered.HIGHEST_PRECEDENCE)
	EngineStoreDecorator idempotencyEncryptingStore(ObjectProvider<EncryptionKeyRing> keyRing,
			IdempotencyProperties properties) {
		EncryptionKeyRing ring = keyRing.getIfUnique(() -> keyRing(properties.getEncryption()));
		Instant replayUnencryptedUntil = properties.getEncryption().getReplayUnencryptedUntil();
		if (replayUnencryptedUntil == null) {
			return (store) -> new EncryptingIdempotencyStore(store, ring);
		}
		if (replayUnencryptedUntil.isAfter(Instant.now())) {
			logger.info("Responses stored in the clear are replayed until " + replayUnencryptedUntil
					+ " (idempotency.encryption.replay-unencrypted-until), and answered as not replayable after it");
		}
		else {
			logger.info("idempotency.encryption.replay-unencrypted-until (" + replayUnencryptedUntil
					+ ") has passed: responses stored in the clear are answered as not replayable");
		}
		return (store) -> new EncryptingIdempotencyStore(store, ring).replayingUnencryptedUntil(replayUnencryptedUntil);
	}

	static EncryptionKeyRing keyRing(Encryption encryption) {
		Map<String, String> keys = encryption.getKeys();
		String primary = encryption.getPrimaryKeyId();
		if (keys.isEmpty()) {
			throw new IllegalStateException("idempotency.encryption.enabled=true needs keys: set"
					+ " idempotency.encryption.keys.<id> (base64 AES keys) and idempotency.encryption.primary-key-id,"
					+ " or define an EncryptionKeyRing bean");
		}
		if (primary == null) {
			if (keys.size() != 1) {
				throw new IllegalStateException("idempotency.encryption.primary-key-id must name one of the keys "
						+ keys.keySet() + " to encrypt new records with");
			}
			primary = keys.keySet().iterator().next();
		}
		try {
			return EncryptionKeyRing.ofBase64(primary, keys);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("Invalid idempotency.encryption settings: " + ex.getMessage(), ex);
		}
	}

}
