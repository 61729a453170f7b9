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


package dev.idempotency.core.jmh;

import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * A first request through {@link IdempotencyEngine}: {@code begin} on a new key, a no-op
 * handler, and {@code complete} with a typical 1 KiB response, on an
 * {@link InMemoryIdempotencyStore} holding 1,000 records. Includes the owner token, the
 * heartbeat that is scheduled when the execution starts and cancelled when it completes,
 * and the store's {@code acquire} and {@code complete}.
 * <p>
 * Measured in batches of new keys like {@link InMemoryStoreFreshKeyBenchmark}; the score
 * is the time per request.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(FreshKeys.BATCH)
@Warmup(iterations = FreshKeys.WARMUP_SHOTS)
@Measurement(iterations = FreshKeys.MEASURED_SHOTS)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class EngineFreshKeyBenchmark {

	private IdempotencyEngine engine;

	private IdempotencyPolicy policy;

	private FreshKeys freshKeys;

	private RequestFingerprint fingerprint;

	private StoredResponse response;

	@Setup(Level.Trial)
	public void setUp() {
		this.policy = IdempotencyPolicy.defaults();
		this.engine = new IdempotencyEngine(BenchmarkData.prefilledStore(1000, this.policy.ttl()));
		this.freshKeys = new FreshKeys("first");
		this.fingerprint = BenchmarkData.fingerprint(-4L);
		this.response = BenchmarkData.response(1024);
	}

	@Setup(Level.Iteration)
	public void nextBatch() {
		this.freshKeys.next(this.engine.store());
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.engine.close();
	}

	@Benchmark
	public void firstRequest(Blackhole blackhole) {
		for (IdempotencyKey key : this.freshKeys.batch()) {
			Decision decision = this.engine.begin(key, this.fingerprint, this.policy);
			if (!(decision instanceof Decision.Execute execute)) {
				throw new IllegalStateException("Key " + key + " is not new: " + decision);
			}
			// the handler does nothing and returns the stored response
			blackhole.consume(execute.execution().complete(this.response));
		}
	}

}
