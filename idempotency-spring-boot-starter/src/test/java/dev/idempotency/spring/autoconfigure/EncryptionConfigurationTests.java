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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.EncryptionKeyRing;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.core.store.ReplayCachingStore;
import dev.idempotency.spring.actuate.IdempotencyEndpoint;
import dev.idempotency.spring.actuate.IdempotencyEndpoint.KeyDescriptor;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link EncryptionConfiguration}: off by default, the engine's store wrapped
 * innermost when on, keys from properties or from a bean, and the actuator endpoint
 * reading an encrypted record.
 *
 * @author Idempotency contributors
 */
class EncryptionConfigurationTests {

	private static final String KEY_A = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

	private static final String KEY_B = "HxwdHhsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=";

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
				IdempotencyMetricsAutoConfiguration.class, IdempotencyEndpointAutoConfiguration.class));

	@Test
	void offByDefaultTheEngineUsesTheStoreItself() {
		this.runner.withPropertyValues("idempotency.encryption.keys.a=" + KEY_A).run((context) -> {
			assertThat(context).doesNotHaveBean(EngineStoreDecorator.class);
			assertThat(engineStore(context)).isSameAs(context.getBean(IdempotencyStore.class));
		});
	}

	@Test
	void enabledWrapsTheStoreInnermost() {
		this.runner.withUserConfiguration(Registry.class)
			.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.a=" + KEY_A,
					"idempotency.encryption.keys.b=" + KEY_B, "idempotency.encryption.primary-key-id=b",
					"idempotency.replay-cache.enabled=true")
			.run((context) -> {
				IdempotencyStore cache = engineStore(context);
				assertThat(cache).isInstanceOf(ReplayCachingStore.class);
				IdempotencyStore metered = ((ReplayCachingStore) cache).getDelegate();
				assertThat(metered).isInstanceOf(MeteredIdempotencyStore.class);
				IdempotencyStore encrypting = ((MeteredIdempotencyStore) metered).getDelegate();
				assertThat(encrypting).isInstanceOf(EncryptingIdempotencyStore.class);
				assertThat(((EncryptingIdempotencyStore) encrypting).getDelegate())
					.isSameAs(context.getBean(IdempotencyStore.class));
				assertThat(encrypting.name()).isEqualTo("memory");
				complete(cache, IdempotencyKey.global("k"));
				StoredResponse held = context.getBean(IdempotencyStore.class)
					.find(IdempotencyKey.global("k"))
					.orElseThrow()
					.response();
				assertThat(held.headers()).containsExactly(new HttpHeader("Idempotency-Encrypted", "v1;key=b"));
			});
	}

	@Test
	void singleKeyNeedsNoPrimaryKeyId() {
		this.runner
			.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.only=" + KEY_A)
			.run((context) -> assertThat(engineStore(context)).isInstanceOf(EncryptingIdempotencyStore.class));
	}

	@Test
	void responsesStoredInTheClearAreRefusedUnlessAWindowIsSet() {
		this.runner
			.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.only=" + KEY_A)
			.run((context) -> {
				EncryptingIdempotencyStore encrypting = (EncryptingIdempotencyStore) engineStore(context);
				assertThat(encrypting.getReplayUnencryptedUntil()).isEmpty();
				IdempotencyStore raw = context.getBean(IdempotencyStore.class);
				complete(raw, IdempotencyKey.global("clear"));
				assertThat(encrypting.find(IdempotencyKey.global("clear")).orElseThrow().response().isReadable())
					.isFalse();
			});
		this.runner
			.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.only=" + KEY_A,
					"idempotency.encryption.replay-unencrypted-until=2999-01-01T00:00:00Z")
			.run((context) -> {
				EncryptingIdempotencyStore encrypting = (EncryptingIdempotencyStore) engineStore(context);
				assertThat(encrypting.getReplayUnencryptedUntil()).contains(Instant.parse("2999-01-01T00:00:00Z"));
				IdempotencyStore raw = context.getBean(IdempotencyStore.class);
				complete(raw, IdempotencyKey.global("clear"));
				assertThat(encrypting.find(IdempotencyKey.global("clear")).orElseThrow().response().isReadable())
					.isTrue();
			});
	}

	@Test
	void enabledWithoutKeysFailsStartUp() {
		this.runner.withPropertyValues("idempotency.encryption.enabled=true")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("idempotency.encryption.keys.<id>"));
	}

	@Test
	void severalKeysWithoutPrimaryFailStartUp() {
		this.runner
			.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.a=" + KEY_A,
					"idempotency.encryption.keys.b=" + KEY_B)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("primary-key-id must name one of the keys"));
	}

	@Test
	void invalidKeyFailsStartUpWithoutShowingIt() {
		this.runner.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.a=AAECAwQ=")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("Key 'a' must be 16, 24 or 32 bytes long")
				.message()
				.doesNotContain("AAECAwQ"));
	}

	@Test
	void keyRingBeanWins() {
		this.runner.withUserConfiguration(KeyRingBean.class)
			.withPropertyValues("idempotency.encryption.enabled=true")
			.run((context) -> {
				complete(engineStore(context), IdempotencyKey.global("k"));
				StoredResponse held = context.getBean(IdempotencyStore.class)
					.find(IdempotencyKey.global("k"))
					.orElseThrow()
					.response();
				assertThat(held.headers().get(0).value()).isEqualTo("v1;key=from-vault");
			});
	}

	@Test
	void endpointReadsTheMetadataOfAnEncryptedRecord() {
		this.runner
			.withPropertyValues("idempotency.encryption.enabled=true", "idempotency.encryption.keys.a=" + KEY_A,
					"management.endpoints.web.exposure.include=idempotency")
			.run((context) -> {
				complete(engineStore(context), IdempotencyKey.global("k"));
				KeyDescriptor descriptor = context.getBean(IdempotencyEndpoint.class).key("k", null);
				assertThat(descriptor).isNotNull();
				assertThat(descriptor.state()).isEqualTo("COMPLETED");
				assertThat(descriptor.response()).isNotNull();
				assertThat(descriptor.response().status()).isEqualTo(201);
				assertThat(descriptor.response().bodySize()).isEqualTo(8);
				assertThat(descriptor.response().headerNames()).containsExactly("Content-Type", "Location");
			});
	}

	private static IdempotencyStore engineStore(AssertableWebApplicationContext context) {
		return context.getBean(IdempotencyEngine.class).store();
	}

	private static void complete(IdempotencyStore store, IdempotencyKey key) {
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, RequestFingerprint.of(new byte[32]), token, Duration.ofSeconds(30), Duration.ofHours(1));
		StoredResponse response = new StoredResponse(201,
				List.of(new HttpHeader("Content-Type", "application/json"), new HttpHeader("Location", "/p/7")),
				"{\"id\":7}".getBytes(StandardCharsets.UTF_8));
		assertThat(store.complete(key, token, response, Duration.ofHours(1))).isTrue();
	}

	@Configuration(proxyBeanMethods = false)
	static class Registry {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class KeyRingBean {

		@Bean
		EncryptionKeyRing keyRing() {
			return EncryptionKeyRing.ofBase64("from-vault", Map.of("from-vault", KEY_B));
		}

		@Bean
		InMemoryIdempotencyStore store() {
			return new InMemoryIdempotencyStore();
		}

	}

}
