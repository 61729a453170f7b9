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

package dev.idempotency.spring.method;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.engine.StoreFailureMode;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import dev.idempotency.test.ForwardingIdempotencyStore;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.aop.framework.ProxyFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for the {@code idempotency.call} observation of {@link IdempotencyTemplate} and
 * of {@code @Idempotent} methods.
 *
 * @author Idempotency contributors
 */
class IdempotencyTemplateObservationTests {

	private static final String NAME = "idempotency.call";

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	private final FailingStore store = new FailingStore();

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store);

	private final IdempotencyTemplate template = new IdempotencyTemplate(this.engine,
			new NamedPolicies(List.of(policy(IdempotencyPolicy.defaults()), policy(
					IdempotencyPolicy.builder().name("open").onStoreFailure(StoreFailureMode.FAIL_OPEN).build()))),
			JsonMapper.builder().build());

	@BeforeEach
	void observe() {
		this.template.setObservationRegistry(this.registry);
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void executedCallIsObservedUntilItsResultIsStored() {
		assertThat(this.template.execute("k1", "request", String.class, () -> "done")).isEqualTo("done");
		assertSingleCall("template", "executed", "default", "false", "stored");
		assertThat(this.registry).hasSingleObservationThat()
			.hasContextualNameEqualTo("idempotency default")
			.doesNotHaveError()
			.hasBeenStopped();
	}

	@Test
	void replayIsObserved() {
		this.template.execute("k1", "request", String.class, () -> "done");
		this.registry.clear();
		assertThat(this.template.execute("k1", "request", String.class, () -> "again")).isEqualTo("done");
		assertSingleCall("template", "replayed", "default", "true", "none");
	}

	@Test
	void callInProgressIsAnOutcomeNotAnError() {
		List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
		this.registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public boolean supportsContext(Observation.Context context) {
				return context instanceof IdempotencyObservationContext;
			}

			@Override
			public void onStop(Observation.Context context) {
				stopped.add(context);
			}

		});
		assertThatExceptionOfType(IdempotentCallInProgressException.class).isThrownBy(() -> this.template.execute("k1",
				"request", String.class, () -> this.template.execute("k1", "request", String.class, () -> "inner")));
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo(NAME, 2);
		// the inner call stops first, while the outer one is current
		assertThat(stopped).extracting(IdempotencyTemplateObservationTests::outcome)
			.containsExactly("in_progress", "executed");
		Observation.Context inner = stopped.get(0);
		Observation.Context outer = stopped.get(1);
		assertThat(inner.getError()).isNull();
		assertThat(inner.getParentObservation()).isNotNull();
		assertThat(inner.getParentObservation().getContextView()).isSameAs(outer);
		assertThat(outer.getError()).isInstanceOf(IdempotentCallInProgressException.class);
		assertThat(outer.getLowCardinalityKeyValue("completion").getValue()).isEqualTo("released");
	}

	@Test
	void keyReusedForAnotherRequestIsObserved() {
		this.template.execute("k1", "request", String.class, () -> "done");
		this.registry.clear();
		assertThatExceptionOfType(IdempotencyKeyReusedException.class)
			.isThrownBy(() -> this.template.execute("k1", "other", String.class, () -> "other"));
		assertSingleCall("template", "mismatch", "default", "false", "none");
		assertThat(this.registry).hasSingleObservationThat().doesNotHaveError();
	}

	@Test
	void storeUnavailableIsObserved() {
		this.store.down = true;
		assertThatExceptionOfType(IdempotencyStoreUnavailableException.class)
			.isThrownBy(() -> this.template.execute("k1", "request", String.class, () -> "done"));
		assertSingleCall("template", "store_unavailable", "default", "false", "none");
	}

	@Test
	void failOpenIsObserved() {
		this.store.down = true;
		assertThat(this.template.withPolicy("open").execute("k1", "request", String.class, () -> "done"))
			.isEqualTo("done");
		assertSingleCall("template", "fail_open", "open", "false", "none");
	}

	@Test
	void missingAndInvalidKeysAreObserved() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.template.execute("", "request", String.class, () -> "done"));
		assertSingleCall("template", "missing_key", "default", "false", "none");
		this.registry.clear();
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.template.execute("with space", "request", String.class, () -> "done"));
		assertSingleCall("template", "invalid_key", "default", "false", "none");
	}

	@Test
	void operationThatThrowsIsTheObservationsErrorAndReleasesTheKey() {
		assertThatIllegalStateException().isThrownBy(() -> this.template.execute("k1", "request", String.class, () -> {
			throw new IllegalStateException("boom");
		}));
		assertSingleCall("template", "executed", "default", "false", "released");
		assertThat(this.registry).hasSingleObservationThat().hasError();
	}

	@Test
	void operationsObservationsAreChildrenOfTheCall() {
		this.template.execute("k1", "request", String.class,
				() -> Observation.createNotStarted("inner", this.registry).observe(() -> "done"));
		assertThat(this.registry).hasObservationWithNameEqualTo("inner")
			.that()
			.hasParentObservationContextMatching((parent) -> parent instanceof IdempotencyObservationContext);
	}

	@Test
	void customConventionIsUsed() {
		this.template.setObservationConvention(new DefaultIdempotencyObservationConvention("custom.call"));
		this.template.execute("k1", "request", String.class, () -> "done");
		assertThat(this.registry).hasSingleObservationThat()
			.hasNameEqualTo("custom.call")
			.hasLowCardinalityKeyValue("entry.point", "template");
	}

	@Test
	void noopRegistryObservesNothing() {
		this.template.setObservationRegistry(ObservationRegistry.NOOP);
		assertThat(this.template.execute("k1", "request", String.class, () -> "done")).isEqualTo("done");
		assertThat(this.registry).doesNotHaveAnyObservation();
	}

	@Test
	void methodCallsAreObservedWithTheirEntryPoint() {
		Payments payments = proxy();
		assertThat(payments.pay("p1", 10)).isEqualTo(1);
		assertSingleCall("method", "executed", "default", "false", "stored");
		this.registry.clear();
		assertThat(payments.pay("p1", 10)).isEqualTo(1);
		assertSingleCall("method", "replayed", "default", "true", "none");
		this.registry.clear();
		assertThatExceptionOfType(IdempotencyKeyReusedException.class).isThrownBy(() -> payments.pay("p1", 20));
		assertSingleCall("method", "mismatch", "default", "false", "none");
		this.registry.clear();
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class).isThrownBy(() -> payments.pay(null, 10));
		assertSingleCall("method", "missing_key", "default", "false", "none");
		this.registry.clear();
		this.store.down = true;
		assertThatExceptionOfType(IdempotencyStoreUnavailableException.class).isThrownBy(() -> payments.pay("p2", 10));
		assertSingleCall("method", "store_unavailable", "default", "false", "none");
		this.registry.clear();
		assertThat(payments.payOpen("p3", 10)).isEqualTo(2);
		assertSingleCall("method", "fail_open", "open", "false", "none");
	}

	private Payments proxy() {
		ProxyFactory factory = new ProxyFactory(new Payments());
		factory.setProxyTargetClass(true);
		factory.addAdvice(new IdempotentMethodInterceptor(this.template, null));
		return (Payments) factory.getProxy();
	}

	private void assertSingleCall(String entryPoint, String outcome, String policy, String replayed,
			String completion) {
		assertThat(this.registry).hasSingleObservationThat()
			.hasNameEqualTo(NAME)
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("entry.point", entryPoint)
			.hasLowCardinalityKeyValue("outcome", outcome)
			.hasLowCardinalityKeyValue("policy", policy)
			.hasLowCardinalityKeyValue("replayed", replayed)
			.hasLowCardinalityKeyValue("completion", completion)
			.satisfies((context) -> {
				assertThat(context.getHighCardinalityKeyValues()).isEmpty();
				assertThat(context.getLowCardinalityKeyValues()).extracting(KeyValue::getKey)
					.containsExactlyInAnyOrder("entry.point", "outcome", "policy", "replayed", "completion");
			});
	}

	private static String outcome(Observation.Context context) {
		return context.getLowCardinalityKeyValue("outcome").getValue();
	}

	private static NamedPolicy policy(IdempotencyPolicy policy) {
		return new NamedPolicy(policy, new Sha256RequestFingerprinter(), List.of(), 1024, 1024, Duration.ofMinutes(1),
				Duration.ofDays(1));
	}

	/**
	 * A bean with idempotent methods.
	 */
	static class Payments {

		private final AtomicInteger calls = new AtomicInteger();

		@Idempotent(key = "#p0")
		int pay(String id, int amount) {
			return this.calls.incrementAndGet();
		}

		@Idempotent(key = "#p0", policy = "open")
		int payOpen(String id, int amount) {
			return this.calls.incrementAndGet();
		}

	}

	/**
	 * An in-memory store that fails every claim while it is down.
	 */
	static class FailingStore extends ForwardingIdempotencyStore {

		volatile boolean down;

		FailingStore() {
			super(new InMemoryIdempotencyStore());
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			if (this.down) {
				throw new IdempotencyStoreException("simulated outage");
			}
			return super.acquire(key, fingerprint, token, lease, ttl);
		}

	}

}
