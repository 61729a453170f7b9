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

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.engine.StatusSet;
import dev.idempotency.core.engine.StoreFailureMode;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.JsonMode;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link IdempotencyPolicyProperties}.
 *
 * @author Idempotency contributors
 */
class IdempotencyPolicyPropertiesTests {

	@Test
	void globalSettingsStartAtTheEngineDefaults() {
		IdempotencyProperties global = new IdempotencyProperties();
		IdempotencyPolicy engine = IdempotencyPolicy.defaults();
		assertThat(global.getTtl()).isEqualTo(engine.ttl());
		assertThat(global.getLockTimeout()).isEqualTo(engine.lockTimeout());
		assertThat(global.getInFlightWait()).isEqualTo(engine.inFlightWait());
		assertThat(global.getOnStoreFailure()).isEqualTo(engine.onStoreFailure());
		assertThat(global.getNonStorableStatuses()).isEqualTo(engine.nonStorableStatuses());
		assertThat(global.getUnavailableRetryAfter()).isEqualTo(engine.unavailableRetryAfter());
		assertThat(global.getInProgressRetryAfter()).isEqualTo(engine.inProgressRetryAfter());
		assertThat(global.getMaxRequestBody()).isEqualTo(DataSize.ofMegabytes(1));
		assertThat(global.getFingerprint().getJson()).isEqualTo(JsonMode.CANONICAL);
		assertThat(global.getFingerprint().getHeaders()).isEmpty();
	}

	@Test
	void namedPolicyStartsUnset() {
		IdempotencyPolicyProperties policy = new IdempotencyPolicyProperties();
		assertThat(policy.getTtl()).isNull();
		assertThat(policy.getNonStorableStatuses()).isNull();
		assertThat(policy.getFingerprint().getHeaders()).isNull();
		assertThat(policy.getFingerprint().getJson()).isNull();
	}

	@Test
	void unsetSettingsInheritAndSetOnesWin() {
		IdempotencyProperties global = new IdempotencyProperties();
		global.setTtl(Duration.ofHours(2));
		global.getFingerprint().setHeaders(List.of("X-Account"));
		IdempotencyPolicyProperties policy = new IdempotencyPolicyProperties();
		policy.setLockTimeout(Duration.ofSeconds(5));
		policy.setOnStoreFailure(StoreFailureMode.FAIL_OPEN);
		policy.getFingerprint().setJson(JsonMode.RAW);
		IdempotencyPolicyProperties merged = policy.orElse(global);
		assertThat(merged.getTtl()).isEqualTo(Duration.ofHours(2));
		assertThat(merged.getLockTimeout()).isEqualTo(Duration.ofSeconds(5));
		assertThat(merged.getOnStoreFailure()).isEqualTo(StoreFailureMode.FAIL_OPEN);
		assertThat(merged.getMaxTtl()).isEqualTo(Duration.ofDays(7));
		assertThat(merged.getFingerprint().getHeaders()).containsExactly("X-Account");
		assertThat(merged.getFingerprint().getJson()).isEqualTo(JsonMode.RAW);
		assertThat(merged.getFingerprint().getExcludedJsonPointers()).isEmpty();
		// neither side is changed by the merge
		assertThat(policy.getTtl()).isNull();
		assertThat(global.getLockTimeout()).isEqualTo(IdempotencyPolicy.DEFAULT_LOCK_TIMEOUT);
	}

	@Test
	void nonStorableStatusesBindFromCodesAndClasses() {
		assertThat(bind("5xx, 408,429").getNonStorableStatuses()).isEqualTo(StatusSet.DEFAULT_NON_STORABLE);
		assertThat(bind("5XX").getNonStorableStatuses()).isEqualTo(StatusSet.parse("5xx"));
		assertThat(bind("409").getNonStorableStatuses()).isEqualTo(StatusSet.of(409));
		assertThat(bind("").getNonStorableStatuses()).isEqualTo(StatusSet.parse(""));
		assertThatExceptionOfType(BindException.class).isThrownBy(() -> bind("5xx,abc"))
			.withMessageContaining("idempotency.non-storable-statuses")
			.withStackTraceContaining("'abc' is neither an HTTP status code nor a class");
	}

	private static IdempotencyProperties bind(String statuses) {
		ApplicationConversionService conversion = new ApplicationConversionService();
		conversion.addConverter(new StatusSetConverter());
		Binder binder = new Binder(
				List.of(new MapConfigurationPropertySource(Map.of("idempotency.non-storable-statuses", statuses))),
				null, conversion);
		return binder.bindOrCreate("idempotency", Bindable.of(IdempotencyProperties.class));
	}

}
