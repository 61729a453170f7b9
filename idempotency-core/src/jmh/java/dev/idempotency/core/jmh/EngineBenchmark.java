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
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link IdempotencyEngine#begin} for the replay of a completed key, on an
 * {@link InMemoryIdempotencyStore} holding 1,000 records: the engine's own work on top
 * of the store's {@code acquire} (owner token, decision, listener). First requests are
 * measured by {@link EngineFreshKeyBenchmark}.
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 4, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@State(Scope.Benchmark)
public class EngineBenchmark {

	private IdempotencyEngine engine;

	private IdempotencyPolicy policy;

	private IdempotencyKey hotKey;

	private RequestFingerprint fingerprint;

	@Setup
	public void setUp() {
		this.policy = IdempotencyPolicy.defaults();
		this.engine = new IdempotencyEngine(BenchmarkData.prefilledStore(1000, this.policy.ttl()));
		this.hotKey = BenchmarkData.keys("hot", 1)[0];
		this.fingerprint = BenchmarkData.fingerprint(-3L);
		StoredResponse response = BenchmarkData.response(1024);
		if (!(this.engine.begin(this.hotKey, this.fingerprint, this.policy) instanceof Decision.Execute execute)) {
			throw new IllegalStateException("Hot key is not new");
		}
		execute.execution().complete(response);
		if (!(replay() instanceof Decision.Replay)) {
			throw new IllegalStateException("Hot key is not replayed");
		}
	}

	@TearDown
	public void tearDown() {
		this.engine.close();
	}

	@Benchmark
	public Decision replay() {
		return this.engine.begin(this.hotKey, this.fingerprint, this.policy);
	}

}
